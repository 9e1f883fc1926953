// The training loop, its single-rank check and its report (see training_run.hpp).
#include "runtime/training/training_run.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>

#if defined(__SSE2__)
#include <pmmintrin.h>
#include <xmmintrin.h>
#endif

#include <boost/crc.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include "common/error.hpp"
#include "common/escape.hpp"
#include "common/fault_point.hpp"
#include "common/fresh_temporary.hpp"
#include "common/median.hpp"
#include "common/saturating.hpp"
#include "common/stopwatch.hpp"
#include "runtime/comm/loopback_communicator.hpp"
#include "runtime/comm/subgroup_communicator.hpp"
#include "runtime/executor/attention_run.hpp"
#include "runtime/schedule/precision.hpp"
#include "runtime/kernels/blas.hpp"
#include "runtime/kernels/device_traffic.hpp"
#include "runtime/training/detail/memory_preflight.hpp"
#include "runtime/training/detail/relative_error.hpp"
#include "runtime/training/detail/state_shards.hpp"
#include "runtime/training/zero_model.hpp"
#include "runtime/training/zero_report.hpp"

namespace burst::rt {
namespace {

// The saved state must come from a run of this very model on this data schedule (sequence
// length, mask, text) and learning rate: otherwise "resume" would silently train something else.
TrainingState load_matching_state(const std::string& path, const ModelLayout& model, const Json& expected) {
  TrainingState state = load_training_state(path);  // the file (or manifest) itself; its shards once it matches
  Problems problems;
  const auto compare = [&](const std::string& key, const Json& want, const Json& got) {
    if (got == want) return;
    problems.add(
        path,
        fmt::format("the saved run has {} {}, this run has {}", key, got.is_null() ? "none" : got.dump(), want.dump()),
        "a state saved by a run of the same model, sequence length, mask, data and learning rate",
        "resume with the plan, --data and --lr that saved it");
  };
  for (const auto& [key, want] : expected.items()) {
    if (key != "model") {
      // A state saved before batches were planned trained one sequence a step.
      const Json absent = key == "batch" ? Json(1) : Json();
      compare(key, want, state.meta.contains(key) ? state.meta[key] : absent);
      continue;
    }
    const Json& saved = state.meta.contains("model") ? state.meta["model"] : Json::object();
    for (const auto& [dim, value] : want.items()) {
      if (dim != "name") compare(dim, value, saved.contains(dim) ? saved[dim] : Json());
    }
  }
  problems.throw_if_any();
  state = assemble_shards(std::move(state), path, model.size());
  if (state.params.size() != model.size()) {
    throw Error(
        Problem{path, fmt::format("{} parameters saved, the model has {}", state.params.size(), model.size()), "", ""});
  }
  return state;
}

// --save-every N saves to --save every N steps: it needs a --save, and N is at least 1 (0: off).
// --keep K keeps K complete saves: at least 1, the one just written.
void check_save_options(const TrainingOptions& o) {
  if (o.save_every < 0) throw Error(Problem{"--save-every", fmt::format("{}", o.save_every), "at least 1", ""});
  if (o.save_every > 0 && o.save.empty()) {
    throw Error(Problem{"--save-every", "needs --save: the file the state is saved to", "", "add --save FILE"});
  }
  if (o.keep < 1) throw Error(Problem{"--keep", fmt::format("{}", o.keep), "at least 1", ""});
}

// --save must be writable before the run spends its steps: not a directory, in a directory this
// process can create files in.
void check_writable(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target = fs::absolute(path);
  const auto fail = [&](const std::string& what) {
    throw Error(Problem{"--save", fmt::format("{}: {}", path, what), "a file path in a writable directory", ""});
  };
  if (fs::is_directory(target)) fail("is a directory");
  if (!fs::is_directory(target.parent_path()))
    fail(fmt::format("the directory {} does not exist", target.parent_path().string()));
  const FreshTemporary probe = create_fresh_temporary(target.string(), "probe");  // never through a planted link
  if (probe.fd < 0) {
    fail(fmt::format("cannot create files in {}: {}", target.parent_path().string(), std::strerror(errno)));
  }
  ::close(probe.fd);
  std::error_code ec;
  fs::remove(probe.path, ec);
}

// A copy of the plan on one rank: one contiguous block, every activation kept, logits whole.
plan::Plan single_rank_plan(plan::Plan plan) {
  plan::Strategy& s = plan.strategy;
  s.tp = 1;
  s.cp = 1;
  s.ulysses = 1;
  s.dp = 1;
  s.micro_batch = 1;
  s.ring = RingKind::Flat;
  s.inner = 1;
  s.outer = 1;
  s.layout = Layout::Contiguous;
  s.checkpoint.policy = CheckpointPolicy::None;
  s.checkpoint.kept_fraction = 0;
  s.lm_head_chunks = 1;
  plan.job.batch = 1;
  plan.ranks = {{0, 0, 0}};
  plan.rings = {{"flat", 0, {0}}};
  return plan;
}

// As training sharpens attention, exp(s - lse) of far-off keys and tiny gradients fall into the
// subnormal range, where x86 arithmetic is up to 100x slower: step times grew 2.5x over 30 steps.
// Flush them to zero (what GPUs do in their fast paths), in this thread and so in the kernel
// threads it starts, which inherit its floating-point state.
void flush_subnormals_to_zero() {
#if defined(__SSE2__)
  _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
  _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
#endif
}

// The loss is all-reduced and the gradient norm global, so every rank sees the same values and
// stops at the same step: no rank is left waiting in a collective. The loss is checked before
// the optimizer runs (no norm yet), then both after it. `saved`: where --save-every last saved
// this run (the manifest), and after which step; the hint names it, or says nothing was saved.
struct LastSave {
  std::string path;
  std::int64_t step = 0;  // 0: none yet
};

void require_finite(std::int64_t step, double loss, std::optional<double> grad_norm, const LastSave& saved) {
  if (std::isfinite(loss) && (!grad_norm || std::isfinite(*grad_norm))) return;
  // NaN's sign bit is an accident of the arithmetic that made it: "nan", never "-nan".
  const auto shown = [](double v) { return std::isnan(v) ? std::string("nan") : fmt::format("{}", v); };
  const std::string norm = grad_norm ? shown(*grad_norm) : "not computed";
  const std::string kept = saved.step > 0 ? fmt::format(
                                                "the last save, the state after step {}, is {} (--resume {} "
                                                "continues from it)",
                                                saved.step, saved.path, saved.path)
                                          : std::string("nothing was saved");
  throw Error(Problem{fmt::format("step {}", step),
                      fmt::format("training diverged: loss {}, gradient norm {}", shown(loss), norm), "finite values",
                      "lower --lr (and check the data and the state it resumed from); " + kept});
}

}  // namespace

struct TrainingRun::StepRecord {
  double loss = 0;
  double step_s = 0;
  double grad_norm = 0;
  double lr = 0;            // the step's learning rate (the schedule's)
  double collective_s = 0;  // in ZeRO's collectives (the gradient all-reduce at stages 0-1)
  double optimizer_s = 0;   // from the optimizer step's start to its return, on the host
  DeviceTraffic traffic;    // what this process moved between host and device in the step (device_traffic.hpp)
  StepOutcome outcome;
  struct Memory {  // one column of the ledger after the step
    std::uint64_t peak = 0;
    MemoryLedger::Breakdown at_peak{};
    MemoryLedger::Breakdown peak_by_use{};
  };
  std::array<Memory, 2> memory;  // host, device
};

namespace {

// The first step (which fills the pools and connects the rings) and the most any later step moved
// of each kind: what a step costs once the run is warm. Counted over this process (its ranks).
TrainingReport::Traffic traffic_summary(const std::vector<DeviceTraffic>& steps) {
  TrainingReport::Traffic out{steps.front(), std::nullopt};
  if (steps.size() < 2) return out;
  DeviceTraffic later;
  for (std::size_t i = 1; i < steps.size(); ++i) {
    const DeviceTraffic& t = steps[i];
    later.host_to_device_bytes = std::max(later.host_to_device_bytes, t.host_to_device_bytes);
    later.device_to_host_bytes = std::max(later.device_to_host_bytes, t.device_to_host_bytes);
    later.host_waits = std::max(later.host_waits, t.host_waits);
    later.device_synchronizations = std::max(later.device_synchronizations, t.device_synchronizations);
    later.driver_allocations = std::max(later.driver_allocations, t.driver_allocations);
    later.host_page_faults = std::max(later.host_page_faults, t.host_page_faults);
  }
  out.later_steps_max = later;
  return out;
}

// The step's kernels where they compute on a GPU (a GPU run), else null.
StepKernels* device_step(const StepBackend& backend) {
  return backend.step != nullptr && backend.step->memory().space() == MemorySpace::Device ? backend.step : nullptr;
}

// The GPU step's kernels where the model state lives in their memory (a GPU run whose plan does
// not offload; zero_model.hpp), else null: the state is then on the host.
StepKernels* state_on_gpu(const plan::Plan& plan, const StepBackend& backend) {
  return plan.strategy.zero.offload ? nullptr : device_step(backend);
}

// How the device column counts: the plan's precision and offload, or, when the step runs on a
// GPU, its own activation dtype, with the whole model state on the host where the plan offloads
// (the device column then has the units the step binds; zero_model.hpp).
DeviceLayout device_layout(const plan::Plan& plan, const StepBackend& backend) {
  const bool offload = plan.strategy.zero.offload;
  if (const StepKernels* gpu = device_step(backend)) return {dtype_size(gpu->activation_dtype()), offload, offload};
  return {dtype_size(precision_of(plan).activations), offload};
}

// Before anything large is allocated: the plan's least footprint on a rank against what this
// rank can have (memory_preflight.hpp). Every rank holds its replica's share of a micro-batch
// (seq x micro_batch / (ranks / dp) tokens); a GPU run's
// activations are checked against its GPU's share, its model state against the host's.
void require_fits_memory(const plan::Plan& plan, const Communicator& comm, const TrainingOptions& options) {
  const auto ranks = static_cast<int>(plan.ranks.size());
  StepKernels* gpu = device_step(options.backend);
  if (gpu == nullptr) single_threaded_blas();  // opened now, its mappings count (kernels/blas.hpp)
  std::optional<MemoryAvailable> device;
  if (gpu != nullptr) {
    if (const std::optional<DeviceMemoryUse> use = gpu->memory().device_use()) {
      device = device_memory_available(*use, options.ranks_per_device);
    }
  }
  const int replica_ranks = std::max(1, ranks / std::max(1, plan.strategy.dp));
  require_memory(minimum_training_memory(plan, plan.job.seq * plan.strategy.micro_batch / replica_ranks, ranks,
                                         gpu != nullptr ? dtype_size(gpu->activation_dtype()) : 0,
                                         state_on_gpu(plan, options.backend) != nullptr),
                 memory_available(comm.local_size()), device);
}

// A communicator over `count` world ranks from `first`, `stride` apart (this rank among them).
std::unique_ptr<SubgroupCommunicator> strided_group(Communicator& comm, int first, int stride, int count) {
  std::vector<int> members;
  for (int i = 0; i < count; ++i) members.push_back(first + i * stride);
  return std::make_unique<SubgroupCommunicator>(comm, std::move(members));
}

// tp > 1: this rank's tensor-parallel group (the tp consecutive world ranks around it), and the
// ranks holding the same part (every rank with the same index mod tp).
std::unique_ptr<SubgroupCommunicator> tensor_group(const plan::Plan& plan, Communicator& comm) {
  const int tp = plan.strategy.tp;
  return tp > 1 ? strided_group(comm, comm.rank() - comm.rank() % tp, 1, tp) : nullptr;
}

std::unique_ptr<SubgroupCommunicator> sharding_group(const plan::Plan& plan, Communicator& comm) {
  const int tp = plan.strategy.tp;
  return tp > 1 ? strided_group(comm, comm.rank() % tp, tp, comm.size() / tp) : nullptr;
}

std::optional<TensorParallelShard> tensor_parallel_part(const plan::Plan& plan, const ModelLayout& model,
                                                        const Communicator* group) {
  if (group == nullptr) return std::nullopt;
  return std::optional<TensorParallelShard>(std::in_place, model, plan.strategy.tp, group->rank());
}

// The options with the schedule's defaults resolved for the plan's model, and checked.
TrainingOptions with_resolved_lr(TrainingOptions options, const plan::Plan& plan) {
  options.lr = resolved(options.lr, ModelLayout(plan.job.model).size());
  return options;
}

}  // namespace

TrainingRun::TrainingRun(const plan::Plan& plan, Communicator& comm, TrainingOptions options)
    : plan_((require_runnable_job(plan, comm.size()), require_runnable_linears(plan),
             require_fits_memory(plan, comm, options), plan)),
      comm_(comm),
      options_(with_resolved_lr(std::move(options), plan)),
      model_(plan.job.model),
      tensor_group_(tensor_group(plan_, comm)),
      sharding_group_(sharding_group(plan_, comm)),
      part_(tensor_parallel_part(plan_, model_, tensor_group_.get())),
      corpus_(read_corpus(options_.data)),
      corpus_crc_(corpus_digest(corpus_)),
      resumed_(options_.resume.empty()
                   ? std::nullopt
                   : std::optional(load_matching_state(resume_source(options_.resume), model_, schedule_meta()))),
      ledger_(device_layout(plan_, options_.backend)),
      step_(plan_, step_model(), plan_.job.seq, comm, ledger_, options_.backend,
            {tensor_group_.get(), part_ ? &*part_ : nullptr}),
      host_state_(options_.host_state_memory ? options_.host_state_memory() : std::make_unique<HostKernelMemory>()),
      first_step_(resumed_ ? resumed_->step : 0) {
  if (resumed_ && comm.rank() == 0) {
    const std::string source = resume_source(options_.resume);
    const std::string lost =
        source == options_.resume ? "" : fmt::format(" ({} is missing: its newest complete set)", options_.resume);
    fmt::print(stderr, "resume: {}: {}{}\n", source, describe_saved(*resumed_), lost);
  }
  if (options_.steps < 1) throw Error(Problem{"--steps", fmt::format("{}", options_.steps), "at least 1", ""});
  for (const plan::Item& item : plan_.predicted.memory_bytes) {  // for an allocation that does not fit to quote
    if (const std::optional<MemoryUse> use = memory_use_named(item.name)) {
      ledger_.set_predicted(*use, saturating_size(item.value));
    }
  }
  check_save_options(options_);
  if (!options_.save.empty()) check_writable(options_.save);
  (void)training_sequence(corpus_, plan_.job.seq, first_step_, plan_.job.mask);  // the data fits the mask
  if (const std::string warning = repetition_warning(corpus_, plan_.job.seq, plan_.job.mask);
      !warning.empty() && comm.rank() == 0) {
    fmt::print(stderr, "warning: {}\n", escape::terminal(warning));  // it names the data, a path
  }
  if (const std::string note = encoding_note(corpus_); !note.empty() && comm.rank() == 0) {
    fmt::print(stderr, "note: {}\n", note);
  }
}

std::unique_ptr<Communicator> TrainingRun::device_collectives(SubgroupCommunicator* group) const {
  if (!options_.device_collectives) return nullptr;
  if (group != nullptr) return options_.device_collectives(*group, group->members());
  std::vector<int> everyone(static_cast<std::size_t>(comm_.size()));
  std::iota(everyone.begin(), everyone.end(), 0);
  return options_.device_collectives(comm_, everyone);
}

std::vector<TrainingSequence> TrainingRun::step_sequences(std::int64_t index) const {
  std::vector<TrainingSequence> out;
  const std::int64_t batch = plan_.job.batch;
  for (std::int64_t b = 0; b < batch; ++b)
    out.push_back(training_sequence(corpus_, plan_.job.seq, index * batch + b, plan_.job.mask));
  return out;
}

Json TrainingRun::schedule_meta() const {
  return {{"model", to_json(model_.spec())},   {"seq", plan_.job.seq},        {"batch", plan_.job.batch},
          {"mask", to_string(plan_.job.mask)}, {"corpus_crc32", corpus_crc_}, {"lr", options_.lr.peak}};
}

void TrainingRun::require_same_inputs_everywhere() {
  boost::crc_32_type crc;
  crc.process_bytes(&corpus_crc_, sizeof corpus_crc_);
  if (resumed_) crc.process_bytes(resumed_->params.data(), resumed_->params.size() * sizeof(float));
  const std::uint32_t digest = crc.checksum();
  // All ranks agree iff the largest digest is also the smallest: max(d) == -max(-d).
  std::vector<std::int64_t> extremes{digest, -static_cast<std::int64_t>(digest)};
  comm_.allreduce(std::span<std::int64_t>(extremes), ReduceOp::Max);
  if (extremes[0] != -extremes[1]) {
    throw Error(Problem{"--data/--resume", "the ranks read different training text or saved state",
                        "the same files on every node",
                        "copy the data and the state to every node, or use a shared file system"});
  }
}

TrainingCheck TrainingRun::check_against_single_rank(const std::vector<TrainingSequence>& sequences,
                                                     std::span<const float> params, std::span<const float> grads,
                                                     double loss, double grad_norm) const {
  const plan::Plan reference = single_rank_plan(plan_);
  const auto self = make_self_communicator(comm_.options());
  MemoryLedger ledger;
  TrainingStep step(reference, model_, plan_.job.seq, *self, ledger);
  // The whole global batch on one rank, one sequence after another, its gradients summed here
  // (not by the weight source the distributed step accumulated in).
  const std::int64_t counted = counted_targets(sequences);
  std::vector<float> ref_grads(model_.size()), one(model_.size());
  double loss_sum = 0;
  for (const TrainingSequence& sequence : sequences) {
    loss_sum += step.run(params, one, {sequence.tokens, sequence.targets, counted}).loss_sum;
    for (std::size_t i = 0; i < one.size(); ++i) ref_grads[i] += one[i];
  }
  const double ref_loss = counted > 0 ? loss_sum / static_cast<double>(counted) : 0.0;
  TrainingCheck check;
  check.loss = loss;
  check.reference_loss = ref_loss;
  for (const auto& [name, slice] : model_.named()) {
    const double e = relative_error(slice.of(grads), slice.of(std::span<const float>(ref_grads)));
    check.rel_err_grad_by_tensor.emplace_back(name, e);
    if (e >= check.max_rel_err_grad) {
      check.max_rel_err_grad = e;
      check.worst_tensor = name;
    }
  }
  check.loss_rel_err = std::fabs(loss - ref_loss) / std::max(1e-30, std::fabs(ref_loss));
  double squares = 0;
  for (const float g : ref_grads) squares += static_cast<double>(g) * g;
  check.grad_norm = grad_norm;
  check.reference_grad_norm = std::sqrt(squares);
  check.grad_norm_rel_err =
      std::fabs(grad_norm - check.reference_grad_norm) / std::max(1e-30, check.reference_grad_norm);
  // Rounding travelling bf16 accumulators at every hop (the one-rank step has no hops) is
  // allowed its own, wider tolerance; a step whose activations are all bf16 (the GPU's) a wider one still.
  const AttentionPrecision precision = precision_of(plan_);
  const bool bf16_hops = precision.dq == DType::BF16 || precision.dkv == DType::BF16;
  const bool bf16_step = options_.backend.step != nullptr && options_.backend.step->activation_dtype() != DType::F32;
  check.tolerance = bf16_step ? options_.bf16_step_tolerance : bf16_hops ? options_.bf16_tolerance : options_.tolerance;
  check.passed = check.max_rel_err_grad <= check.tolerance && check.loss_rel_err <= check.tolerance &&
                 check.grad_norm_rel_err <= check.tolerance;
  return check;
}

std::optional<TrainingReport> TrainingRun::run() {
  flush_subnormals_to_zero();
  require_same_inputs_everywhere();
  std::vector<float> params = resumed_ ? std::move(resumed_->params) : initial_params(model_, options_.seed);
  AdamWState adam;
  if (resumed_) adam = {std::move(resumed_->adam_m), std::move(resumed_->adam_v), resumed_->adam_step};
  if (part_) {  // this rank's part of the whole state
    params = part_->extract(params);
    for (std::vector<float>* moment : {&adam.m, &adam.v}) {
      if (!moment->empty()) *moment = part_->extract(*moment);
    }
  }
  resumed_.reset();
  StepKernels* gpu = state_on_gpu(plan_, options_.backend);
  StepKernels& state = gpu != nullptr ? *gpu : host_state_;
  // Device collectives, in the same order on every rank: the sharding group's for a GPU-resident
  // state, then the tensor-parallel group's for a GPU step (its activations; and the state's
  // replicated gradients where the state is on the GPU too).
  const std::unique_ptr<Communicator> state_comm = gpu != nullptr ? device_collectives(sharding_group_.get()) : nullptr;
  tensor_transport_ =
      tensor_group_ && device_step(options_.backend) != nullptr ? device_collectives(tensor_group_.get()) : nullptr;
  if (tensor_transport_) step_.carry_tensor_parallel_on(*tensor_transport_);
  Communicator* tensor_state_comm = gpu != nullptr && tensor_transport_ ? tensor_transport_.get() : tensor_group_.get();
  ZeroModel model(plan_.strategy.zero.stage, plan_.strategy.overlap, step_model(), state,
                  state_comm ? *state_comm : zero_comm(), zero_comm(), ledger_, std::move(params), std::move(adam),
                  {tensor_state_comm, tensor_group_.get(), part_ ? part_->replicated() : std::vector<Slice>{}});
  const std::int64_t seq = plan_.job.seq;
  const auto& positions = step_.positions();
  const TrainingStep::HeldRows held = step_.held_rows();
  const int micro_batches = plan::accumulation_steps(plan_);
  const int replica = RingSchedule::replica_of(plan_, comm_.rank());
  std::vector<StepRecord> records;
  // --check: rank 0 keeps the first step's sequences, whole parameters and summed gradients, and
  // runs the single-rank step after the last collective, so no rank waits on it.
  struct FirstStep {
    std::vector<TrainingSequence> sequences;
    std::vector<float> params, grads;
    double loss = 0;
  };
  std::optional<FirstStep> first;
  LastSave saved{options_.save};
  for (int i = 0; i < options_.steps; ++i) {
    const std::int64_t index = first_step_ + i;
    // Every rank reads the whole global batch: the loss is the mean over all of its targets.
    std::vector<TrainingSequence> batch = step_sequences(index);
    const std::int64_t counted = counted_targets(batch);
    comm_.barrier();
    const auto start = std::chrono::steady_clock::now();
    ledger_.reset_peaks();
    StepRecord record;
    const DeviceTraffic traffic_before = device_traffic();
    // This replica's share of the batch, micro-batch after micro-batch (each its m sequences
    // side by side), the gradients adding up.
    const auto per_micro_batch = static_cast<std::size_t>(step_.sequences());
    for (int j = 0; j < micro_batches; ++j) {
      std::vector<std::int32_t> tokens, targets;
      for (std::size_t e = 0; e < per_micro_batch; ++e) {
        const std::size_t b = static_cast<std::size_t>(replica * micro_batches + j) * per_micro_batch + e;
        for (const std::int64_t p : positions) {
          tokens.push_back(batch[b].tokens[static_cast<std::size_t>(p)]);
          targets.push_back(batch[b].targets[static_cast<std::size_t>(p)]);
        }
      }
      const auto first_held = static_cast<std::size_t>(held.first), held_count = static_cast<std::size_t>(held.count);
      model.start_micro_batch(j == 0);
      record.outcome += step_.run(model, {std::span(tokens).subspan(first_held, held_count),
                                          std::span(targets).subspan(first_held, held_count), counted});
    }
    model.reduce_gradients();
    std::vector<double> loss_sum{record.outcome.loss_sum};
    comm_.allreduce(std::span<double>(loss_sum), ReduceOp::Sum);
    record.loss = counted > 0 ? loss_sum[0] / static_cast<double>(counted) : 0.0;
    const double before_copy = seconds_since(start);
    if (options_.check && i == 0) {
      auto [whole_params, whole_grads] = whole_on_root(model);
      if (comm_.rank() == 0)
        first = FirstStep{std::move(batch), std::move(whole_params), std::move(whole_grads), record.loss};
    }
    require_finite(index + 1, record.loss, std::nullopt, saved);
    const auto optimizer_start = std::chrono::steady_clock::now();
    AdamWConfig adamw = options_.adamw;
    adamw.lr = lr_at(options_.lr, index + 1);
    record.lr = adamw.lr;
    record.grad_norm = model.optimizer_step(adamw);
    require_finite(index + 1, record.loss, record.grad_norm, saved);
    record.optimizer_s = seconds_since(optimizer_start);
    record.step_s = before_copy + record.optimizer_s;
    record.traffic = device_traffic().since(traffic_before);
    if (i + 1 == options_.steps) model.finish_collectives();  // the last step's gathers, counted with it
    record.collective_s = model.take_collective_s();
    for (const Column column : {Column::Host, Column::Device}) {
      StepRecord::Memory& m = record.memory[static_cast<std::size_t>(column)];
      m.peak = ledger_.peak(column);
      m.at_peak = ledger_.at_peak(column);
      for (std::size_t u = 0; u < kMemoryUseCount; ++u)
        m.peak_by_use[u] = ledger_.peak(static_cast<MemoryUse>(u), column);
    }
    if (comm_.rank() == 0 && options_.progress) {
      options_.progress({index + 1, first_step_ + options_.steps, record.loss, record.step_s,
                         static_cast<double>(seq * plan_.job.batch) / record.step_s, record.grad_norm,
                         record.memory[0].peak});
    }
    records.push_back(record);
    const int done = i + 1;
    if (options_.save_every > 0 && done % options_.save_every == 0 && done < options_.steps) {
      save(model, index + 1);
      saved.step = index + 1;
    }
  }
  if (!options_.save.empty()) save(model, first_step_ + options_.steps);
  comm_.barrier();  // the state is on disk before any rank moves on (a resume may follow)
  std::optional<TrainingReport> out = report(records, model);
  if (first) {
    out->check = check_against_single_rank(first->sequences, first->params, first->grads, first->loss,
                                           records.front().grad_norm);
  }
  return out;
}

std::vector<float> TrainingRun::whole_of_parts(std::span<const float> part) const {
  const int tp = part_->tp();
  if (comm_.rank() >= tp) return {};
  const std::size_t n = part_->local().size();
  std::vector<float> parts(comm_.rank() == 0 ? n * static_cast<std::size_t>(tp) : 0);
  tensor_group_->gather_to_root(part, std::span<float>(parts));
  if (comm_.rank() != 0) return {};
  std::vector<float> whole(model_.size());
  for (int t = 0; t < tp; ++t) {
    TensorParallelShard(model_, tp, t)
        .insert(std::span<const float>(parts).subspan(static_cast<std::size_t>(t) * n, n), whole);
  }
  return whole;
}

std::pair<std::vector<float>, std::vector<float>> TrainingRun::whole_on_root(ZeroModel& model) {
  auto parts = model.whole_on_root();
  if (!part_) return parts;
  return {whole_of_parts(parts.first), whole_of_parts(parts.second)};
}

TrainingState TrainingRun::whole_state_on_root(ZeroModel& model) const {
  TrainingState part = model.whole_state_on_root();
  TrainingState whole;
  whole.params = whole_of_parts(part.params);
  whole.adam_m = whole_of_parts(part.adam_m);
  whole.adam_v = whole_of_parts(part.adam_v);
  whole.adam_step = part.adam_step;
  return whole;
}

// One set a save (state_shards.hpp): rank 0 numbers the generation and sends the number, every
// rank writes its shard into it (at stage 0 the state is whole on every rank: rank 0 writes it as
// the one shard of a one-rank map; a tensor-parallel run's ranks hold parts, which rank 0 puts
// together and writes the same way), and once all are on disk rank 0 completes the set and
// removes the generations beyond --keep.
void TrainingRun::save(ZeroModel& model, std::int64_t step) const {
  const bool whole_from_root = model.stage() == 0 || part_;
  TrainingState state = part_ ? whole_state_on_root(model) : model.saved_part();
  state.meta = schedule_meta();
  state.meta["data"] = corpus_.source;
  state.meta["plan"] = {{"strategy", plan_.strategy.name}, {"ranks", comm_.size()}, {"zero_stage", model.stage()}};
  state.step = step;
  std::vector<std::int64_t> number{comm_.rank() == 0 ? next_generation(options_.save) : 0};
  comm_.broadcast(std::span<std::int64_t>(number), 0);
  const SaveSet set{options_.save, number[0], step};
  const ShardMap whole(model_.units(), 1);
  const ShardMap& shards = whole_from_root ? whole : model.shards();
  const int stage = whole_from_root ? 0 : model.stage();
  if (!whole_from_root || comm_.rank() == 0) {
    save_shard(set, shards, stage, whole_from_root ? 0 : comm_.rank(), state);
    fault_point("die-after-shard", comm_.rank());
  }
  comm_.barrier();
  if (comm_.rank() != 0) return;
  save_manifest(set, shards, stage, std::move(state));
  remove_old_generations(set, options_.keep);
}

// Collective. Every rank's worst step (its ledger peak and the breakdown at that moment) and each
// use's own peak over the steps; on rank 0, the largest rank's.
TrainingRun::MemorySummary TrainingRun::gather_memory(const std::vector<StepRecord>& records, Column column) {
  const auto c = static_cast<std::size_t>(column);
  const auto worst = std::max_element(records.begin(), records.end(), [c](const StepRecord& a, const StepRecord& b) {
    return a.memory[c].peak < b.memory[c].peak;
  });
  MemoryLedger::Breakdown peak_by_use{};
  for (const StepRecord& r : records) {
    for (std::size_t u = 0; u < kMemoryUseCount; ++u)
      peak_by_use[u] = std::max(peak_by_use[u], r.memory[c].peak_by_use[u]);
  }
  std::vector<std::uint64_t> mine{worst->memory[c].peak};
  mine.insert(mine.end(), worst->memory[c].at_peak.begin(), worst->memory[c].at_peak.end());
  mine.insert(mine.end(), peak_by_use.begin(), peak_by_use.end());
  std::vector<std::uint64_t> all(comm_.rank() == 0 ? mine.size() * static_cast<std::size_t>(comm_.size()) : 0);
  comm_.gather_to_root(std::span<const std::uint64_t>(mine), std::span<std::uint64_t>(all));
  MemorySummary out;
  for (std::size_t r = 0; r * mine.size() < all.size(); ++r) {
    const std::uint64_t* row = all.data() + r * mine.size();
    out.by_rank.push_back(row[0]);
    if (row[0] >= out.peak) {
      out.peak = row[0];
      for (std::size_t u = 0; u < kMemoryUseCount; ++u) out.at_peak[u] = row[1 + u];
    }
    for (std::size_t u = 0; u < kMemoryUseCount; ++u) {
      out.use_peaks[u] = std::max(out.use_peaks[u], row[1 + kMemoryUseCount + u]);
    }
  }
  return out;
}

// Collective: what CUDA says the GPU step's memory held, the largest rank's (null on the CPU).
// The step's kernels and the attention's share one pool (make_step_attention_kernels); the
// device's use is cudaMemGetInfo's, everything on the GPU (the loopback's ranks share one).
std::optional<DeviceMemoryUse> TrainingRun::gather_gpu_memory() {
  const StepBackend& backend = options_.backend;
  const std::optional<DeviceMemoryUse> step =
      backend.step != nullptr ? backend.step->memory().device_use() : std::nullopt;
  if (!step) return std::nullopt;
  std::vector<std::int64_t> most{static_cast<std::int64_t>(step->pool_peak_bytes),
                                 static_cast<std::int64_t>(step->device_used_bytes),
                                 static_cast<std::int64_t>(step->device_total_bytes)};
  comm_.allreduce(std::span<std::int64_t>(most), ReduceOp::Max);
  return DeviceMemoryUse{static_cast<std::uint64_t>(most[0]), static_cast<std::uint64_t>(most[1]),
                         static_cast<std::uint64_t>(most[2])};
}

std::optional<TrainingReport> TrainingRun::report(const std::vector<StepRecord>& records, const ZeroModel& model) {
  const MemorySummary memory = gather_memory(records, Column::Host);
  const MemorySummary device = gather_memory(records, Column::Device);
  const std::optional<DeviceMemoryUse> gpu_memory = gather_gpu_memory();
  if (comm_.rank() != 0) return std::nullopt;

  TrainingReport report;
  std::vector<double> step_times;
  TrainingReport::Measured& mean = report.measured;
  double collective_s = 0;
  const auto n = static_cast<double>(records.size());
  for (const StepRecord& r : records) {
    collective_s += r.collective_s / n;
    report.steps.push_back(
        {r.loss, r.step_s, static_cast<double>(plan_.job.seq * plan_.job.batch) / r.step_s, r.grad_norm, r.lr});
    step_times.push_back(r.step_s);
    mean.forward_s += r.outcome.forward_s / n;
    mean.backward_s += r.outcome.backward_s / n;
    mean.recompute_s += r.outcome.recompute_s / n;
    mean.attention_s += (r.outcome.attention_s + r.outcome.attention_recompute_s) / n;
    mean.loss_s += r.outcome.loss_s / n;
    // What the passes spent outside ring attention (the recompute's counted once, in recompute_s),
    // the recompute, and the LM head and loss.
    mean.dense_s += std::max(0.0, r.outcome.forward_s + r.outcome.backward_s - r.outcome.attention_s -
                                      r.outcome.recompute_s - r.outcome.loss_s) /
                    n;
    mean.optimizer_s += r.optimizer_s / n;
    mean.sequence_parallel_bytes = std::max(mean.sequence_parallel_bytes, r.outcome.sequence_parallel_bytes);
  }
  mean.step_s_median = median(step_times);
  const plan::Strategy& s = plan_.strategy;
  report.plan = {s.name,
                 comm_.size(),
                 fmt::format("{} {}x{}", to_string(s.ring), s.ring == RingKind::Double ? s.inner : s.cp,
                             s.ring == RingKind::Double ? s.outer : 1),
                 std::string(to_string(s.layout)),
                 std::string(to_string(s.backward)),
                 std::string(to_string(plan_.job.mask)),
                 std::string(to_string(s.checkpoint.policy)),
                 s.checkpoint.policy == CheckpointPolicy::SeqStash ? s.checkpoint.kept_fraction : 0.0,
                 s.lm_head_chunks,
                 s.tp,
                 s.dp,
                 plan_.job.batch,
                 s.micro_batch,
                 plan::accumulation_steps(plan_)};
  TrainingReport::Run& run = report.run;
  run.model = model_.spec();
  run.parameters = model_.size();
  run.seq = plan_.job.seq;
  run.first_step = first_step_;
  run.steps = options_.steps;
  run.seed = options_.seed;
  run.lr = options_.lr.peak;
  run.lr_schedule = options_.lr;
  run.resumed_from = options_.resume;
  run.device = options_.backend.step != nullptr ? options_.backend.step->device() : "cpu";
  run.saved_to = options_.save;
  run.recomputed_rows_per_rank = step_.recomputed_rows();
  run.precision = precision_of(plan_);
  run.overlap = s.overlap;
  run.data = {corpus_.source, corpus_.names.size(), corpus_.bytes.size()};
  report.peak_memory_bytes = memory.peak;
  report.peak_memory_bytes_by_rank = memory.by_rank;
  report.memory = {model.resident(), memory.at_peak, memory.use_peaks};
  report.memory_on_gpu = {model.resident(Column::Device), device.at_peak, device.use_peaks};
  report.peak_on_gpu = device.peak;
  report.measured_by_cuda = gpu_memory;
  report.memory_items = memory_items(plan_, {memory.use_peaks, memory.peak}, {device.use_peaks, device.peak});
  report.zero = zero_summary(plan_, model.shards(), collective_s, model.parameter_bytes(),
                             model.state_space() == MemorySpace::Device);
  report.predicted_memory_bytes = plan_.predicted.memory_total_bytes;
  report.predicted_memory = plan_.predicted.memory_bytes;
  report.predicted_step_s = plan_.predicted.step_time_s;
  std::vector<DeviceTraffic> traffic;
  for (const StepRecord& r : records) traffic.push_back(r.traffic);
  report.device_traffic = traffic_summary(traffic);
  return report;
}

}  // namespace burst::rt
