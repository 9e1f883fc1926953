// Running, checking and measuring a plan's attention (see attention_run.hpp).
#include "runtime/executor/attention_run.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "common/median.hpp"
#include "common/stopwatch.hpp"
#include "runtime/executor/distributed_attention.hpp"
#include "runtime/executor/detail/host_attention.hpp"
#include "runtime/schedule/wire_format.hpp"

namespace burst::rt {
namespace {

enum InputTensor : std::uint64_t { kQ = 0, kK = 1, kV = 2, kDO = 3 };

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1), a pure function of (seed, tensor, position, head, dim).
Tensor random_rows(std::uint64_t seed, InputTensor tensor, std::span<const std::int64_t> positions, Shape shape) {
  Tensor t(shape);
  auto out = t.values();
  std::size_t i = 0;
  for (const std::int64_t p : positions) {
    for (std::int64_t h = 0; h < shape.heads; ++h) {
      for (std::int64_t d = 0; d < shape.head_dim; ++d) {
        const std::uint64_t key =
            ((static_cast<std::uint64_t>(p) * 4 + tensor) * static_cast<std::uint64_t>(shape.heads) +
             static_cast<std::uint64_t>(h)) *
                static_cast<std::uint64_t>(shape.head_dim) +
            static_cast<std::uint64_t>(d);
        const std::uint64_t r = splitmix64(splitmix64(seed) ^ key);
        out[i++] = static_cast<float>(static_cast<double>(r >> 11) * 0x1.0p-53 * 2.0 - 1.0);
      }
    }
  }
  return t;
}

struct Dims {
  std::int64_t seq = 0;
  int heads = 0, kv_heads = 0, head_dim = 0;
};

// The plan as run: its own dimensions, or the dry run's tiny ones (see the header).
Dims run_dims(plan::Plan& plan, const AttentionRunOptions& options) {
  const ModelSpec& m = plan.job.model;
  // A tensor-parallel rank attends with its heads / tp query and kv_heads / tp KV heads.
  const int tp = std::max(1, plan.strategy.tp);
  if (!options.dry_run) return {plan.job.seq, m.heads / tp, m.kv_heads / tp, m.head_dim};
  const int u = plan.strategy.ulysses;
  const std::int64_t seq = 2 * layout_multiple(plan.strategy.layout, plan.strategy.cp) * u;
  const auto scaled = [&](std::int64_t tokens) {
    return std::max<std::int64_t>(1, (tokens * seq + plan.job.seq - 1) / plan.job.seq);
  };
  Mask& mask = plan.job.mask;
  if (mask.kind == MaskKind::SlidingWindow) mask.window = scaled(mask.window);
  if (mask.kind == MaskKind::Document) mask.doc_len = scaled(mask.doc_len);
  plan.job.seq = seq;
  const int group = std::max(1, m.kv_heads > 0 ? m.heads / m.kv_heads : 1);  // query heads per KV head
  // Head dim 8, or the smallest the kernels have (the CUDA kernels are built for 64 and 128).
  const KernelLimits limits = options.kernels != nullptr ? options.kernels->limits() : KernelLimits{};
  const int head_dim =
      limits.head_dims.empty() ? 8 : *std::min_element(limits.head_dims.begin(), limits.head_dims.end());
  return {seq, group * u, u, head_dim};
}

// Per-rank figures gathered to rank 0, one fp64 each (byte counts stay exact up to 2^53).
enum Figure : std::size_t {
  kForwardS,
  kBackwardS,
  kFwdFlat,
  kFwdIntra,
  kFwdInter,
  kBwdFlat,
  kBwdIntra,
  kBwdInter,
  kFwdUlysses,
  kBwdUlysses,
  kFwdSent,
  kFwdReceived,
  kBwdSent,
  kBwdReceived,
  kFwdBlocks,
  kBwdBlocks,
  kFwdComputeS,
  kBwdComputeS,
  kForwardFastestS,
  kForwardSlowestS,
  kBackwardFastestS,
  kBackwardSlowestS,
  kFigureCount
};

// Ring bytes by level (the read rings and the travelling accumulators), then the Ulysses
// all-to-all's bytes, apart: the simulator prices them as separate transfers.
void read_bytes(const Communicator& comm, std::vector<double>& figures, std::size_t first_level, std::size_t ulysses) {
  for (int level = 0; level < kRingLevelCount; ++level) {
    const auto l = static_cast<RingLevel>(level);
    figures[first_level + static_cast<std::size_t>(level)] = static_cast<double>(
        comm.bytes_sent(l) - comm.bytes_sent(Channel::Ulysses, l) - comm.bytes_sent(Channel::Collective, l));
  }
  figures[ulysses] = static_cast<double>(comm.bytes_sent(Channel::Ulysses));
}

// Rank 0's view of every rank's rows, each put back at its global position in its
// context-parallel group's tensor (`schedules`: rank 0's, RingSchedule::every_context; every
// group runs the same layer on the same inputs: a tensor-parallel rank's heads are a layer of
// their own).
std::vector<Tensor> assemble(Communicator& comm, const plan::Plan& plan, const std::vector<RingSchedule>& schedules,
                             ConstView mine, Shape full) {
  const auto n = static_cast<std::size_t>(mine.shape.elements());
  std::vector<float> all(comm.rank() == 0 ? n * static_cast<std::size_t>(comm.size()) : 0);
  comm.gather_to_root(std::span<const float>(mine.data, n), std::span<float>(all));
  std::vector<Tensor> out(schedules.size(), Tensor(full));
  if (comm.rank() != 0) return out;
  const auto row = static_cast<std::size_t>(full.row_stride());
  for (int w = 0; w < comm.size(); ++w) {
    const auto group = static_cast<std::size_t>(RingSchedule::context_of(plan, w));
    const auto positions = schedules[group].rank_positions(w);
    for (std::size_t i = 0; i < positions.size(); ++i) {
      std::copy_n(
          all.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(w) * n + i * row), row,
          out[group].values().begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(positions[i]) * row));
    }
  }
  return out;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  double worst = 0;
  const auto x = a.values(), y = b.values();
  for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, static_cast<double>(std::fabs(x[i] - y[i])));
  return worst;
}

// ||a - b||_2 / ||b||_2: the typical relative error, where the max shows the worst element.
double rms_relative(const Tensor& a, const Tensor& b) {
  double err = 0, ref = 0;
  const auto x = a.values(), y = b.values();
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double d = static_cast<double>(x[i]) - y[i];
    err += d * d;
    ref += static_cast<double>(y[i]) * y[i];
  }
  return ref > 0 ? std::sqrt(err / ref) : std::sqrt(err);
}

double max_abs(const Tensor& a) {
  double most = 0;
  for (const float x : a.values()) most = std::max(most, static_cast<double>(std::fabs(x)));
  return most;
}

// A tensor as a bf16 plan stores it.
Tensor stored(Tensor t, DType dtype) {
  if (dtype == DType::BF16) round_to_bf16(t.values());
  return t;
}

}  // namespace

void require_kernel_limits(const AttentionKernels& kernels, int head_dim, const AttentionPrecision& precision) {
  const KernelLimits limits = kernels.limits();
  Problems problems;
  if (!limits.fp32_inputs && precision.activations != DType::BF16) {
    problems.add({"plan:/job/dtype", fmt::format("the {} kernels compute on bf16 inputs only", kernels.device()),
                  "\"bf16\"", "plan with --dtype bf16, or run with --dtype bf16 (or --device cpu)"});
  }
  if (!limits.head_dims.empty() &&
      std::find(limits.head_dims.begin(), limits.head_dims.end(), head_dim) == limits.head_dims.end()) {
    problems.add({"plan:/job/model/head_dim",
                  fmt::format("the {} kernels have no head dim {}", kernels.device(), head_dim),
                  fmt::format("one of {}", fmt::join(limits.head_dims, ", ")), "run it with --device cpu"});
  }
  problems.throw_if_any();
}

void require_runnable_job(const plan::Plan& plan, int job_ranks) {
  const auto world = static_cast<int>(plan.ranks.size());
  if (job_ranks != world) {
    throw Error(Problem{
        "mpirun -np", fmt::format("the plan has {} ranks, this job has {}", world, job_ranks),
        fmt::format("{} ranks", world),
        fmt::format("start it with mpirun -np {} burst run ... (add --oversubscribe on a small machine)", world)});
  }
}

PreparedRun prepare_attention_run(const plan::Plan& original, int job_ranks, const AttentionRunOptions& options,
                                  int rank) {
  require_runnable_job(original, job_ranks);
  if (options.warmups < 0 || options.repeats < 1) {
    throw Error(Problem{"--repeat", fmt::format("{} timed runs after {} warm-ups", options.repeats, options.warmups),
                        "at least 1 timed run", ""});
  }
  plan::Plan plan = original;
  const Dims dims = run_dims(plan, options);
  PreparedRun prepared{plan,
                       dims.seq,
                       dims.heads,
                       dims.kv_heads,
                       dims.head_dim,
                       std::move(RingSchedule::every_context(plan, dims.seq)[RingSchedule::context_of(plan, rank)]),
                       precision_of(plan)};
  if (options.kernels != nullptr) require_kernel_limits(*options.kernels, dims.head_dim, prepared.precision);
  prepared.schedule.require_complete();
  return prepared;
}

plan::Plan plan_as_run(const PreparedRun& prepared) {
  plan::Plan out = prepared.plan;
  out.job.model.heads = prepared.heads;
  out.job.model.kv_heads = prepared.kv_heads;
  out.job.model.head_dim = prepared.head_dim;
  out.job.seq = prepared.seq;
  return out;
}

namespace {

// Both phases between barriers, each timed (to the end of its last kernel) and its bytes
// counted; the per-rank figures: times the median over the timed runs, counts the last run's.
struct Phases {
  Tensor o, d_q, d_k, d_v;
  std::vector<double> figures = std::vector<double>(kFigureCount);
};

struct Inputs {
  Tensor q, k, v, d_o;
};

Phases run_phases(const PreparedRun& prepared, Communicator& comm, const Inputs& in, const AttentionRunOptions& options,
                  TraceRecorder* recorder) {
  DistributedAttention attention(prepared.schedule, comm, in.q.shape(), in.k.shape(),
                                 {prepared.precision, prepared.plan.strategy.overlap, options.kernels, recorder});
  HostAttention tensors(attention, in.q.view(), in.k.view(), in.v.view(), in.d_o.view());
  Phases out;
  std::vector<double>& f = out.figures;
  constexpr std::array kTimes{kForwardS, kBackwardS, kFwdComputeS, kBwdComputeS};
  std::array<std::vector<double>, kTimes.size()> timed;
  RingAttentionStats fs, bs;
  const int runs = options.warmups + options.repeats;
  for (int run = 0; run < runs; ++run) {
    comm.barrier();
    comm.reset_counters();
    auto start = std::chrono::steady_clock::now();
    if (recorder != nullptr) {
      recorder->start(start);  // the trace keeps the last run
      recorder->set_phase(TracePhase::Forward);
    }
    fs = tensors.forward();
    attention.memory().wait();
    f[kForwardS] = seconds_since(start);
    read_bytes(comm, f, kFwdFlat, kFwdUlysses);
    comm.barrier();
    comm.reset_counters();
    start = std::chrono::steady_clock::now();
    if (recorder != nullptr) recorder->set_phase(TracePhase::Backward);
    bs = tensors.backward(prepared.plan.strategy.backward);
    attention.memory().wait();
    f[kBackwardS] = seconds_since(start);
    read_bytes(comm, f, kBwdFlat, kBwdUlysses);
    f[kFwdComputeS] = fs.compute_s;
    f[kBwdComputeS] = bs.compute_s;
    if (run < options.warmups) continue;
    for (std::size_t t = 0; t < kTimes.size(); ++t) timed[t].push_back(f[kTimes[t]]);
  }
  for (std::size_t t = 0; t < kTimes.size(); ++t) f[kTimes[t]] = median(timed[t]);
  const auto spread = [&](std::size_t t, Figure fastest, Figure slowest) {
    const auto [lo, hi] = std::minmax_element(timed[t].begin(), timed[t].end());
    f[fastest] = *lo;
    f[slowest] = *hi;
  };
  spread(0, kForwardFastestS, kForwardSlowestS);  // kTimes[0], the forward's phase time
  spread(1, kBackwardFastestS, kBackwardSlowestS);
  out.o = tensors.o();
  out.d_q = tensors.d_q();
  out.d_k = tensors.d_k();
  out.d_v = tensors.d_v();
  f[kFwdSent] = fs.messages_sent;
  f[kFwdReceived] = fs.messages_received;
  f[kBwdSent] = bs.messages_sent;
  f[kBwdReceived] = bs.messages_received;
  f[kFwdBlocks] = fs.blocks_computed;
  f[kBwdBlocks] = bs.blocks_computed;
  return out;
}

// Rank 0's summary of every rank's figures (all[r * kFigureCount + f]): bytes, messages, times.
void add_measurements(std::span<const double> all, int world, AttentionReport& report) {
  const auto column = [&](Figure f) {
    std::vector<double> values;
    for (int r = 0; r < world; ++r) values.push_back(all[static_cast<std::size_t>(r) * kFigureCount + f]);
    return values;
  };
  const auto max_of = [&](Figure f) {
    const auto values = column(f);
    return *std::max_element(values.begin(), values.end());
  };
  const auto mean_of = [&](Figure f) {
    double sum = 0;
    for (const double x : column(f)) sum += x;
    return sum / world;
  };
  const auto sum_of = [&](Figure f) { return mean_of(f) * world; };
  const auto levels = [&](Figure first) {
    LevelBytes by_level{};
    for (int level = 0; level < kRingLevelCount; ++level)
      by_level[static_cast<std::size_t>(level)] = mean_of(static_cast<Figure>(first + static_cast<std::size_t>(level)));
    return by_level;
  };
  const auto total = [](const LevelBytes& b) { return b[0] + b[1] + b[2]; };
  AttentionReport::Bytes& bytes = report.comm_bytes;
  bytes.by_level = {levels(kFwdFlat), levels(kBwdFlat)};
  bytes.total = {total(bytes.by_level.forward), total(bytes.by_level.backward)};
  bytes.ulysses = {mean_of(kFwdUlysses), mean_of(kBwdUlysses)};
  report.messages = {{sum_of(kFwdSent), sum_of(kBwdSent)},
                     {sum_of(kFwdReceived), sum_of(kBwdReceived)},
                     {sum_of(kFwdBlocks), sum_of(kBwdBlocks)}};
  report.measured = {{max_of(kForwardS), max_of(kBackwardS)},
                     {max_of(kFwdComputeS), max_of(kBwdComputeS)},
                     {max_of(kForwardFastestS), max_of(kBackwardFastestS)},
                     {max_of(kForwardSlowestS), max_of(kBackwardSlowestS)}};
}

struct Assembled {
  std::vector<Tensor> o, d_q, d_k, d_v;  // on rank 0, one a replica, every row at its position
};

// The check against full_attention over the whole sequence, on the same (bf16-rounded for a
// bf16 plan) inputs: absolute error when everything is fp32, relative when bf16 is involved;
// every replica's result is checked, and the worst counts.
AttentionCheck check_report(const PreparedRun& prepared, const AttentionRunOptions& options, const Assembled& got) {
  const plan::Plan& plan = prepared.plan;
  const Shape q_full{prepared.seq, prepared.heads, prepared.head_dim},
      kv_full{prepared.seq, prepared.kv_heads, prepared.head_dim};
  const std::vector<std::int64_t> all_positions = contiguous_positions(prepared.seq);
  const DType act = prepared.precision.activations;
  const Tensor qf = stored(random_rows(options.seed, kQ, all_positions, q_full), act),
               kf = stored(random_rows(options.seed, kK, all_positions, kv_full), act),
               vf = stored(random_rows(options.seed, kV, all_positions, kv_full), act),
               dof = stored(random_rows(options.seed, kDO, all_positions, q_full), act);
  const FullAttention ref =
      full_attention(qf.view(), kf.view(), vf.view(), dof.view(), all_positions, {plan.job.mask, std::nullopt});
  AttentionCheck check;
  const DType accumulators =
      plan.strategy.backward == BackwardMode::QRing ? prepared.precision.dq : prepared.precision.dkv;
  check.relative = act == DType::BF16 || accumulators == DType::BF16;
  check.tolerance = check.relative ? options.bf16_tolerance : options.tolerance;
  check.passed = true;
  for (const auto& [field, mine, want] :
       {std::tuple{&TensorErrors::out, &got.o, &ref.o}, std::tuple{&TensorErrors::dq, &got.d_q, &ref.d_q},
        std::tuple{&TensorErrors::dk, &got.d_k, &ref.d_k}, std::tuple{&TensorErrors::dv, &got.d_v, &ref.d_v}}) {
    const double scale = max_abs(*want);
    double abs_err = 0, rms = 0;
    for (const Tensor& replica : *mine) {
      abs_err = std::max(abs_err, max_abs_diff(replica, *want));
      rms = std::max(rms, rms_relative(replica, *want));
    }
    check.max_abs_err.*field = abs_err;
    check.max_rel_err.*field = scale > 0 ? abs_err / scale : abs_err;
    check.rms_rel_err.*field = rms;
    check.passed = check.passed && check.judged().*field <= check.tolerance;
  }
  return check;
}

}  // namespace

std::optional<AttentionReport> run_attention(const plan::Plan& plan, Communicator& comm,
                                             const AttentionRunOptions& options, RunTrace* trace) {
  return run_attention(prepare_attention_run(plan, comm.size(), options, comm.rank()), comm, options, trace);
}

std::optional<AttentionReport> run_attention(const PreparedRun& prepared, Communicator& comm,
                                             const AttentionRunOptions& options, RunTrace* trace) {
  const plan::Plan& plan = prepared.plan;
  const RingSchedule& schedule = prepared.schedule;
  const int world = comm.size();
  const auto positions = schedule.rank_positions(comm.rank());
  const auto c = static_cast<std::int64_t>(positions.size());
  const Shape q_shape{c, prepared.heads, prepared.head_dim}, kv_shape{c, prepared.kv_heads, prepared.head_dim};
  const Inputs inputs{
      random_rows(options.seed, kQ, positions, q_shape), random_rows(options.seed, kK, positions, kv_shape),
      random_rows(options.seed, kV, positions, kv_shape), random_rows(options.seed, kDO, positions, q_shape)};
  TraceRecorder recorder;
  const Phases phases = run_phases(prepared, comm, inputs, options, trace != nullptr ? &recorder : nullptr);

  std::vector<double> all(comm.rank() == 0 ? phases.figures.size() * static_cast<std::size_t>(world) : 0);
  comm.gather_to_root(std::span<const double>(phases.figures), std::span<double>(all));
  if (trace != nullptr) *trace = gather_trace(comm, recorder, plan.ranks);
  const bool check = options.check || options.dry_run;
  Assembled assembled;
  if (check) {
    const Shape q_full{prepared.seq, prepared.heads, prepared.head_dim};
    const Shape kv_full{prepared.seq, prepared.kv_heads, prepared.head_dim};
    // Rank 0's, to place every rank's rows.
    const std::vector<RingSchedule> schedules =
        comm.rank() == 0 ? RingSchedule::every_context(plan, prepared.seq) : std::vector<RingSchedule>{};
    const auto assembled_from = [&](const Tensor& mine, Shape full) {
      return assemble(comm, plan, schedules, mine.view(), full);
    };
    assembled = {assembled_from(phases.o, q_full), assembled_from(phases.d_q, q_full),
                 assembled_from(phases.d_k, kv_full), assembled_from(phases.d_v, kv_full)};
  }
  if (comm.rank() != 0) return std::nullopt;

  AttentionReport report;
  const RingGeometry& ring = schedule.geometry();
  report.plan = {plan.strategy.name,
                 world,
                 plan.strategy.ulysses,
                 plan.strategy.tp,
                 plan.strategy.dp,
                 fmt::format("{} {}x{}", to_string(plan.strategy.ring), ring.inner, ring.outer),
                 std::string(to_string(plan.strategy.layout)),
                 std::string(to_string(plan.strategy.backward)),
                 std::string(to_string(plan.job.mask))};
  report.run = {options.dry_run,
                prepared.seq,
                prepared.heads,
                prepared.kv_heads,
                prepared.head_dim,
                options.seed,
                options.warmups,
                options.repeats,
                plan.strategy.overlap,
                prepared.precision,
                std::string(options.kernels != nullptr ? options.kernels->device() : "cpu")};
  add_measurements(all, world, report);
  report.predicted_s = {plan.predicted.attention_forward_s, plan.predicted.attention_backward_s};
  if (check) report.check = check_report(prepared, options, assembled);
  return report;
}

}  // namespace burst::rt
