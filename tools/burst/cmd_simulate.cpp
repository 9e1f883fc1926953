// burst simulate: predict one attention layer (forward + backward) under one strategy or all
// of them, on a topology, for a model and sequence length. Data on stdout (a table, or JSON
// with --json); progress on stderr.
#include <fstream>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/escape.hpp"
#include "common/parallelism.hpp"
#include "common/strategy_knobs.hpp"
#include "common/units.hpp"
#include "simulator/engine/chrome_trace.hpp"
#include "simulator/layer_simulation.hpp"
#include "simulator/models/model.hpp"
#include "tools/burst/commands.hpp"
#include "tools/burst/job_options.hpp"
#include "tools/burst/simulation_table.hpp"
#include "tools/burst/validators.hpp"
#include "tools/jobs/simulation.hpp"

namespace burst::cli {
namespace {

struct SimulateOptions {
  JobOptions job;
  std::string strategy = "all";
  std::string engine = "event";
  std::string trace;
  bool json = false;
  AttentionKnobOverrides overrides;  // what-if questions of one strategy
  int tp = 1;                        // tensor-parallel degree around the layer
  int dp = 1;                        // data-parallel replicas, each on --global-batch / dp sequences
  bool every_rank = false;           // no copy or ring window standing for others
};

// The layer as `tp` tensor-parallel ranks and `dp` replicas run it: heads / tp per copy, the
// batch split over the replicas (each must be whole).
void apply_parallelism(Job& job, int tp, int dp) {
  Problems problems;
  if (job.shape.heads % tp != 0 || job.shape.kv_heads % tp != 0) {
    problems.add({"--tp",
                  fmt::format("{} does not divide {} heads and {} KV heads", tp, job.shape.heads, job.shape.kv_heads),
                  "a divisor of both head counts", "each tensor-parallel rank computes whole heads"});
  }
  if (job.shape.batch % dp != 0) {
    problems.add({"--dp", fmt::format("{} replicas do not split a batch of {} sequences", dp, job.shape.batch),
                  "a divisor of --global-batch", "each replica runs --global-batch / --dp sequences"});
  }
  problems.throw_if_any();
  job.shape.heads /= tp;
  job.shape.kv_heads /= tp;
  job.shape.tensor_parallel = tp;
  job.shape.data_parallel = dp;
  job.shape.batch /= dp;
}

// Traces past this size open slowly or not at all in a browser (Perfetto's UI holds the whole
// file in memory), so the command says so before spending the disk.
constexpr double kLargeTraceMB = 250;

void write_trace(const std::string& path, const sim::LayerRuns& runs, const topo::Topology& topology) {
  const std::vector<sim::TraceRun> parts{{"forward", &runs.forward.graph, &runs.forward.result},
                                         {"backward", &runs.backward.graph, &runs.backward.result}};
  const std::uint64_t events = sim::trace_event_count(parts);
  const double estimate_mb = static_cast<double>(events * sim::kTraceBytesPerEvent) * 1e-6;
  if (estimate_mb > kLargeTraceMB) {
    fmt::print(stderr,
               "warning: the trace will be about {:.0f} MB ({} events: tasks and link samples); browsers struggle "
               "past {:.0f} MB. Fewer nodes or a shorter --seq give a smaller one\n",
               estimate_mb, events, kLargeTraceMB);
  }
  std::ofstream out(path);
  if (!out)
    throw Error(
        Problem{"--trace", fmt::format("cannot write '{}'", path), "", "check the directory exists and is writable"});
  sim::write_chrome_trace(out, parts, topology);
  out.flush();
  if (!out) throw Error(Problem{"--trace", fmt::format("writing '{}' failed", path), "", "check free disk space"});
  fmt::print(stderr, "trace written to {}, {:.1f} MB (open it in https://ui.perfetto.dev or chrome://tracing)\n",
             escape::terminal(path), static_cast<double>(out.tellp()) * 1e-6);
}

void run(const SimulateOptions& o) {
  Job job = resolve_job(o.job);
  apply_parallelism(job, o.tp, o.dp);
  const std::vector<std::string> names = jobs::strategies_to_simulate(o.strategy);
  if (!o.trace.empty() && names.size() != 1) {
    throw Error(Problem{"--trace", "a trace needs one strategy", "", "add --strategy burst (or another name)"});
  }
  sim::LayerRuns runs;
  const std::vector<sim::LayerSimulation> results =
      jobs::simulate_strategies(job, names, o.overrides, o.engine, true,  // progress on stderr only
                                o.trace.empty() ? nullptr : &runs, o.every_rank);
  if (!o.trace.empty()) {
    if (!results.front().not_applicable.empty()) {
      throw Error(Problem{"--strategy",
                          fmt::format("{} cannot run here: {}", names.front(), results.front().not_applicable), "",
                          "run without --trace to compare every strategy"});
    }
    write_trace(o.trace, runs, *job.topology);
  }

  if (o.json) {
    fmt::print("{}\n", jobs::simulation_json(job, o.engine, results).dump(2));
    return;
  }
  fmt::print("{}\n", describe_job(job));
  print_simulation_table(results);
  for (const auto& r : results) {
    if (r.copies == 1 || !r.not_applicable.empty()) continue;
    if (r.copies_simulated == 1) {
      fmt::print("{}: {} copies (TP {} x DP {}) side by side, one simulated for all: no link tells them apart\n",
                 r.strategy.name, r.copies, o.tp, o.dp);
    } else {
      fmt::print("{}: {} copies (TP {} x DP {}) side by side, all simulated: {}\n", r.strategy.name, r.copies, o.tp,
                 o.dp, o.every_rank ? "--every-rank" : r.copies_note);
    }
  }
  for (const auto& r : results) {
    if (!r.not_applicable.empty()) continue;
    if (r.ring_windows > 1) {
      fmt::print("{}: ring folded onto 1 of its {} windows of whole nodes ({}); --every-rank simulates them all\n",
                 r.strategy.name, r.ring_windows,
                 r.ring_fold_exact
                     ? "exact: every window sees alike links and does the same work"
                     : "the mask gives windows different work: the busiest simulated, docs/cost-models.md");
    } else if (!r.ring_note.empty()) {
      fmt::print("{}: every ring rank simulated: {}\n", r.strategy.name, r.ring_note);
    }
  }
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto options = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand("simulate", "Predict one attention layer (forward + backward) per strategy");
  add_job_options(*cmd, options->job);
  cmd->add_option("--strategy", options->strategy, "Strategy family, or 'all' to compare them side by side")
      ->check(CLI::IsMember([] {
        auto names = sim::family_names();
        names.push_back("all");
        return names;
      }()))
      ->capture_default_str();
  cmd->add_option("--engine", options->engine, "Simulation engine: event (contention) or analytic (fast)")
      ->check(CLI::IsMember(sim::engine_names()))
      ->capture_default_str();
  cmd->add_option("--trace", options->trace, "Write a Chrome trace (Perfetto) of the layer to this file");
  cmd->add_flag("--json", options->json, "Print the results as JSON on stdout");
  // The overrides: each spelling checked by CLI11, then parsed into its knob.
  cmd->add_option_function<std::string>(
         "--layout", [options](const std::string& v) { options->overrides.layout = parse_layout(v, "--layout"); },
         "Override the layout")
      ->check(CLI::IsMember({"contiguous", "zigzag", "striped"}));
  cmd->add_option_function<std::string>(
         "--backward",
         [options](const std::string& v) { options->overrides.backward = parse_backward_mode(v, "--backward"); },
         "Override the backward mode")
      ->check(CLI::IsMember({"kv_ring", "q_ring"}));
  cmd->add_option_function<std::string>(
         "--ring", [options](const std::string& v) { options->overrides.ring = parse_ring_kind(v, "--ring"); },
         "Override the ring kind")
      ->check(CLI::IsMember({"flat", "double"}));
  cmd->add_option("--inner", options->overrides.inner, "Override the double ring's inner size")->check(kAtLeastOne);
  cmd->add_option("--tp", options->tp,
                  "Tensor-parallel degree around the layer: copies of the strategy on heads / tp, side by side in "
                  "each node")
      ->check(kAtLeastOne)
      ->capture_default_str();
  cmd->add_option("--dp", options->dp,
                  "Data-parallel replicas of the layer, each on its own GPUs and --global-batch / dp sequences")
      ->check(kAtLeastOne)
      ->capture_default_str();
  cmd->add_option("--ulysses", options->overrides.ulysses, "Override the Ulysses (head-parallel) degree")
      ->check(kAtLeastOne);
  cmd->add_flag("--every-rank", options->every_rank,
                "Simulate every copy and every rank of a long ring, even where one window of nodes or one copy "
                "stands for the others (slower; checks that reduction)");
  cmd->add_flag_callback(
      "--no-overlap", [options] { options->overrides.overlap = false; },
      "Disable double buffering (transfers wait for compute)");
  cmd->callback([options] { run(*options); });
}

}  // namespace burst::cli
