// mpirun -np N burst bench training plan.json: what the memory-saving choices of a plan cost and
// save, measured by training its model for a few steps per variant on the same ranks:
//   checkpoint policies  none, attn_stash, seq_stash (--kept; not under the full mask nor with
//                        Ulysses groups), full; all on the striped layout (seq_stash needs it),
//                        so they differ in what they keep only
//   LM-head chunks       1 (whole logits) against --chunks, with the plan's policy
// Each row: the peak per rank (model state included) and its activations, stash, ring buffers
// and LM-head workspace at that peak, the LM-head workspace's own peak, the median step time and
// the time spent recomputing. Rank 0 prints as rows finish.
#include <fmt/format.h>

#include "common/error.hpp"
#include "common/units.hpp"
#include "plan/plan.hpp"
#include "runtime/comm/job.hpp"
#include "runtime/training/training_run.hpp"
#include "tools/burst/commands.hpp"
#include "tools/burst/bench_training_device.hpp"
#include "tools/burst/every_rank.hpp"
#include "tools/burst/run_plan_check.hpp"

namespace burst::cli {
namespace {

struct BenchTrainingOptions {
  std::string plan;
  int steps = 2;
  int chunks = 8;
  double kept = 0.5;
  std::string data = rt::kDefaultCorpus;
  bool json = false;
};

struct Variant {
  std::string section, name;
  plan::Plan plan;
};

std::vector<Variant> variants(const plan::Plan& base, const BenchTrainingOptions& o) {
  std::vector<Variant> out;
  const auto policy = [&](CheckpointPolicy p, double kept) {
    plan::Plan v = base;
    v.strategy.layout = Layout::Striped;
    v.strategy.checkpoint.policy = p;
    v.strategy.checkpoint.kept_fraction = kept;
    std::string name = to_string(p);
    if (p == CheckpointPolicy::SeqStash) name += fmt::format(" {:.2f}", kept);
    out.push_back({"checkpoint", name, std::move(v)});
  };
  policy(CheckpointPolicy::None, 0);
  policy(CheckpointPolicy::AttnStash, 0);
  // seq_stash needs a look-back mask, and a rank's first rows to be the sequence's first tokens
  if (base.job.mask.kind != MaskKind::Full && base.strategy.ulysses == 1) policy(CheckpointPolicy::SeqStash, o.kept);
  policy(CheckpointPolicy::Full, 0);
  for (const int chunks : {1, o.chunks}) {
    plan::Plan v = base;
    v.strategy.lm_head_chunks = chunks;
    out.push_back({"lm_head", fmt::format("{} chunk{}", chunks, chunks == 1 ? " (unfused)" : "s"), std::move(v)});
  }
  return out;
}

double in_mib(const Json& bytes) { return bytes.get<double>() / (1024.0 * 1024.0); }

Json row_of(const Variant& v, const rt::TrainingReport& r) {
  Json losses = Json::array();
  for (const rt::TrainingReport::Step& step : r.steps) losses.push_back(step.loss);
  return {{"section", v.section},
          {"variant", v.name},
          {"peak_memory_bytes", r.peak_memory_bytes},
          {"at_peak", rt::memory_uses_json(r.memory.at_peak)},
          {"lm_head_peak_bytes", r.memory.peak_by_use[static_cast<std::size_t>(rt::MemoryUse::LossWorkspace)]},
          {"step_s_median", r.measured.step_s_median},
          {"recompute_s", r.measured.recompute_s},
          {"losses", losses}};
}

void print_row(const Json& row) {
  const Json& at = row["at_peak"];
  fmt::print("{:<11} {:<20} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>8.3f} {:>9.3f}\n",
             row["section"].get<std::string>(), row["variant"].get<std::string>(), in_mib(row["peak_memory_bytes"]),
             in_mib(at["activations"]), in_mib(at["attention_stash"]), in_mib(at["ring_buffers"]),
             in_mib(at["lm_head"]), in_mib(row["lm_head_peak_bytes"]), row["step_s_median"].get<double>(),
             row["recompute_s"].get<double>());
  std::fflush(stdout);
}

void bench(const BenchTrainingOptions& o) {
  rt::Job job({});
  rt::Communicator& comm = job.comm();
  rt::TrainingOptions training;
  training.steps = o.steps;
  training.data = o.data;
  std::vector<Variant> list;
  std::vector<std::unique_ptr<rt::TrainingRun>> runs;
  (void)run_on_every_rank(comm, [&]() -> std::function<void()> {
    const plan::Plan base = plan::read_plan(o.plan);
    check_plan_cluster(base, o.plan);
    std::vector<Variant> candidates = variants(base, o);
    std::vector<std::unique_ptr<rt::TrainingRun>> ready;
    for (const Variant& v : candidates) ready.push_back(std::make_unique<rt::TrainingRun>(v.plan, comm, training));
    list = std::move(candidates);  // all or nothing: a failed variant leaves no rank with a partial list
    runs = std::move(ready);
    return [] {};
  });
  if (runs.empty()) return;  // bad input, reported by rank 0
  if (comm.rank() == 0 && !o.json) {
    fmt::print("bench: {} steps per variant on {} ranks, {} tokens; memory in MiB per rank at the peak\n", o.steps,
               comm.size(), list.front().plan.job.seq);
    fmt::print("{:<11} {:<20} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>9}\n", "", "variant", "peak", "activ.",
               "stash", "ring", "lm_head", "lm peak", "step s", "recomp s");
  }
  Json rows = Json::array();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::optional<rt::TrainingReport> report;
    (void)run_on_every_rank(comm, [&]() -> std::function<void()> { return [&] { report = runs[i]->run(); }; });
    if (!report) continue;  // ranks other than 0
    rows.push_back(row_of(list[i], *report));
    if (!o.json) print_row(rows.back());
  }
  if (comm.rank() == 0 && o.json) fmt::print("{}\n", rows.dump(2));
}

}  // namespace

void add_bench_training_command(CLI::App& bench_app) {
  auto o = std::make_shared<BenchTrainingOptions>();
  auto d = std::make_shared<DeviceTrainingBench>();
  CLI::App* cmd = bench_app.add_subcommand(
      "training",
      "Memory and step time of each checkpoint policy and of the chunked LM head (mpirun -np N burst bench training "
      "plan.json); or, with --device, the step's speed on this machine beside PyTorch's (burst bench training --device "
      "cuda)");
  auto* plan = cmd->add_option("plan", o->plan, "A plan file (burst.plan/2) whose model the runtime can train");
  auto* device = cmd->add_option("--device", d->device,
                                 "Measure the step on this device instead: a model (--model) planned on 1 rank at each "
                                 "--tokens and on --ranks loopback ranks sharing the device, beside PyTorch on cuda")
                     ->check(CLI::IsMember({"cuda", "cpu"}))
                     ->excludes(plan);
  d->model = BURST_BENCH_MODEL;
  auto tokens = std::make_shared<std::vector<std::string>>(std::vector<std::string>{"8K", "32K"});
  d->ranks = {2, 4};
  cmd->add_option("--model", d->model, "--device: the model (Hugging Face config.json)")
      ->needs(device)
      ->capture_default_str();
  cmd->add_option("--tokens", *tokens,
                  "--device: one-rank rows' sequence lengths (the loopback rows use the first per rank)")
      ->needs(device)
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--ranks", d->ranks, "--device: loopback rows' rank counts")
      ->needs(device)
      ->delimiter(',')
      ->check(CLI::Range(2, 64))
      ->capture_default_str();
  cmd->add_option("--peak-tflops", d->peak_tflops,
                  "--device: the device's peak for MFU (default 989 on cuda: H100/H200 SXM bf16)")
      ->needs(device)
      ->check(CLI::PositiveNumber);
  cmd->add_flag(
         "--no-torch", [d](std::int64_t) { d->torch = false; }, "--device: skip PyTorch's step")
      ->needs(device);
  auto* steps = cmd->add_option("--steps", o->steps, "Training steps per variant (--device: per row, default 6)")
                    ->check(CLI::Range(1, 1000))
                    ->capture_default_str();
  cmd->add_option("--chunks", o->chunks, "LM-head chunks to set against the unfused head")
      ->check(CLI::Range(2, 1 << 20))
      ->capture_default_str()
      ->excludes(device);
  cmd->add_option("--kept", o->kept, "seq_stash: the kept fraction of the local sequence")
      ->check(CLI::Range(0.01, 0.99))
      ->capture_default_str()
      ->excludes(device);
  cmd->add_option("--data", o->data, "Training text: a directory (every file a document) or a file")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print the rows as JSON");
  cmd->callback([o, d, tokens, steps] {
    if (d->device.empty()) {
      if (o->plan.empty()) throw Error(Problem{"bench training", "no plan file", "a plan, or --device cuda|cpu", ""});
      return bench(*o);
    }
    d->tokens.clear();
    for (const std::string& t : *tokens) d->tokens.push_back(units::parse_tokens(t, "--tokens"));
    d->steps = steps->count() > 0 ? o->steps : 6;
    d->data = o->data;
    d->json = o->json;
    run_training_bench_device(*d);
  });
}

}  // namespace burst::cli
