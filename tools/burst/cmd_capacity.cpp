// burst capacity: the best plan as the cluster grows, and the fewest nodes on which the job
// fits. Data on stdout (a table, or JSON with --json); progress on stderr.
#include <fmt/format.h>

#include "common/units.hpp"
#include "planner/capacity.hpp"
#include "common/interrupt.hpp"
#include "tools/burst/cut_short.hpp"
#include "tools/burst/commands.hpp"
#include "tools/burst/work_bounds.hpp"
#include "tools/burst/plan_options.hpp"
#include "tools/burst/plan_table.hpp"
#include "tools/burst/validators.hpp"

namespace burst::cli {
namespace {

struct CapacityOptions {
  PlanOptions plan;
  int max_nodes = 64;
  bool json = false;
  bool force = false;
};

Json row_json(const planner::ScalingRow& r) {
  return Json{{"nodes", r.nodes},
              {"gpus", r.gpus},
              {"strategy", r.strategy},
              {"feasible", r.feasible},
              {"reason", r.reason},
              {"step_time_s", r.step_time_s},
              {"tokens_per_s_per_gpu", r.tokens_per_s_per_gpu},
              {"mfu", r.mfu},
              {"memory_bytes_per_gpu", r.memory_total_bytes}};
}

void report_scaling(const CapacityOptions& o, const PlanningJob& p, const std::vector<planner::ScalingRow>& rows) {
  const planner::ScalingRow* fewest = planner::fewest_fitting(rows);
  if (o.json) {
    Json out = jobs::planning_json(p);
    out["fewest_nodes"] = fewest != nullptr ? Json(fewest->nodes) : Json(nullptr);
    Json list = Json::array();
    for (const auto& r : rows) list.push_back(row_json(r));
    out["scaling"] = list;
    fmt::print("{}\n", out.dump(2));
    return;
  }
  fmt::print("{}\n\n", jobs::describe_planning(p));
  print_scaling_table(stdout, rows);
  if (fewest != nullptr) {
    fmt::print("\nfewest nodes that fit: {} ({} GPUs, {}, {:.1f} tokens/s per GPU, {} per iteration)\n", fewest->nodes,
               fewest->gpus, fewest->strategy, fewest->tokens_per_s_per_gpu,
               units::human_duration(fewest->step_time_s));
  } else {
    fmt::print(
        "\nthe job fits on none of these node counts (up to {}): try --max-nodes, a shorter --seq or a larger "
        "--memory-budget\n",
        o.max_nodes);
  }
}

void run(const CapacityOptions& o) {
  require_bounded("--max-nodes", o.max_nodes, kMaxCapacityNodes, o.force, "nodes, a plan search at every power of two",
                  "ask for fewer nodes");
  const PlanningJob p = resolve_planning(o.plan);
  const InterruptScope ctrl_c;  // Ctrl-C: finish the node count in hand, then report the rows done
  const std::vector<int> node_counts = planner::default_node_counts(o.max_nodes);
  const auto rows = planner::scaling_table(p.request, *p.job.topology, node_counts);
  report_scaling(o, p, rows);
  if (interrupt_requested()) {
    throw CutShort(fmt::format("capacity: cut short by Ctrl-C after {} of {} node counts; the table holds those",
                               rows.size(), node_counts.size()));
  }
}

}  // namespace

void add_capacity_command(CLI::App& app) {
  auto options = std::make_shared<CapacityOptions>();
  CLI::App* cmd =
      app.add_subcommand("capacity", "Fewest nodes on which a job fits, and how throughput scales with nodes");
  add_plan_options(*cmd, options->plan);
  cmd->add_option("--max-nodes", options->max_nodes, "Largest node count of the table (powers of two up to it)")
      ->check(kAtLeastOne)
      ->capture_default_str();
  cmd->add_flag("--json", options->json, "Print the table as JSON on stdout");
  cmd->add_flag("--force", options->force, fmt::format("Allow --max-nodes above {}", kMaxCapacityNodes));
  cmd->callback([options] { run(*options); });
}

}  // namespace burst::cli
