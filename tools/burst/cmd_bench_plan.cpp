// burst bench plan: how fast the planner is. Plans a 7B model at 2M tokens on 32 GPUs (and a
// larger case) over every strategy family with the contention-aware event engine, best of
// --repeat runs, and prints the wall time next to the goal (under 2 s for the 32-GPU case).
// Figures, not assertions: speed goals live here.
#include <chrono>

#include <fmt/format.h>

#include "common/stopwatch.hpp"
#include "common/units.hpp"
#include "planner/search/search.hpp"
#include "simulator/models/model.hpp"
#include "common/interrupt.hpp"
#include "tools/burst/cut_short.hpp"
#include "tools/burst/commands.hpp"
#include "tools/burst/validators.hpp"
#include "topologies/load.hpp"

namespace burst::cli {
namespace {

struct PlanBenchCase {
  std::string topology;
  int nodes;
  std::string model;
  std::string seq;
  double goal_s;  // 0: no goal set
};

struct PlanBenchOptions {
  int repeats = 3;
  bool json = false;
};

Json run_case(const PlanBenchCase& c, const PlanBenchOptions& o) {
  topo::LoadOptions load;
  load.nodes = c.nodes;
  planner::SearchRequest request;
  request.job.model = sim::model_preset(c.model);
  request.job.seq = units::parse_tokens(c.seq, "seq");
  request.simulation.engine = "event";
  double best = 1e30;
  planner::SearchResult result;
  for (int r = 0; r < o.repeats && !(r > 0 && interrupt_requested()); ++r) {  // Ctrl-C: the best of the runs done
    const auto start = std::chrono::steady_clock::now();
    const topo::Topology topology = topo::load_topology(c.topology, load);
    result = planner::search(request, topology);
    best = std::min(best, seconds_since(start));
  }
  const auto* chosen = result.chosen_plan();
  return Json{{"topology", c.topology},
              {"nodes", c.nodes},
              {"model", c.model},
              {"seq", c.seq},
              {"candidates", result.candidates_evaluated},
              {"plan_s", best},
              {"candidates_per_s", result.candidates_evaluated / best},
              {"goal_s", c.goal_s},
              {"chosen", chosen != nullptr ? chosen->family : ""}};
}

void run(const PlanBenchOptions& o) {
  const std::vector<PlanBenchCase> cases = {
      {"a800-4hca", 4, "burst-7b", "2M", 2.0},
      {"a800-4hca", 16, "burst-14b", "4M", 0},
  };
  const InterruptScope ctrl_c;  // Ctrl-C: finish the case in hand, report the cases done
  Json all = Json::array();
  if (!o.json) {
    fmt::print("{:<10} {:>5} {:<10} {:>4} {:>11} {:>10} {:>8} {:>5}  chosen\n", "topology", "nodes", "model", "seq",
               "candidates", "plan ms", "goal ms", "met");
  }
  for (const auto& c : cases) {
    if (interrupt_requested()) break;
    fmt::print(stderr, "bench: planning {} on {} x{} at {} ...\n", c.model, c.topology, c.nodes, c.seq);
    Json r = run_case(c, o);
    if (!o.json) {
      const double s = r["plan_s"].get<double>();
      fmt::print("{:<10} {:>5} {:<10} {:>4} {:>11} {:>10.1f} {:>8} {:>5}  {}\n", c.topology, c.nodes, c.model, c.seq,
                 r["candidates"].get<int>(), s * 1e3, c.goal_s > 0 ? fmt::format("{:.0f}", c.goal_s * 1e3) : "-",
                 c.goal_s > 0 ? (s <= c.goal_s ? "yes" : "NO") : "-", r["chosen"].get<std::string>());
    }
    all.push_back(std::move(r));
  }
  if (o.json) fmt::print("{}\n", all.dump(2));
  if (interrupt_requested()) {
    throw CutShort(fmt::format("bench plan: cut short by Ctrl-C after {} of {} cases", all.size(), cases.size()));
  }
}

}  // namespace

void add_bench_plan_command(CLI::App& bench) {
  auto options = std::make_shared<PlanBenchOptions>();
  CLI::App* cmd = bench.add_subcommand("plan", "Time the planner: every family, event engine, 32 and 128 GPUs");
  cmd->add_option("--repeat", options->repeats, "Runs per case (the best is reported)")
      ->check(kAtLeastOne)
      ->capture_default_str();
  cmd->add_flag("--json", options->json, "Print the figures as JSON");
  cmd->callback([options] { run(*options); });
}

}  // namespace burst::cli
