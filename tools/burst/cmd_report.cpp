// burst report plan.json -o report.html|report.md: the capacity report of a plan, with the
// scaling table recomputed on the plan's own cluster (its burst.topology/1 document) and job.
#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "planner/capacity.hpp"
#include "planner/plan_builder.hpp"
#include "planner/report/report.hpp"
#include "simulator/cost_model.hpp"
#include "tools/burst/commands.hpp"
#include "tools/burst/validators.hpp"
#include "topologies/json_format.hpp"

namespace burst::cli {
namespace {

struct ReportOptions {
  std::string plan;
  std::string output;
  int max_nodes = 0;  // 0: twice the plan's nodes
  bool no_scaling = false;
};

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void run(const ReportOptions& o) {
  const bool html = ends_with(o.output, ".html") || ends_with(o.output, ".htm");
  if (!html && !ends_with(o.output, ".md")) {
    throw Error(Problem{"-o", fmt::format("'{}': unknown report format", o.output), "a name ending in .html or .md", ""});
  }
  planner::ReportInput input;
  input.plan = plan::read_plan(o.plan);
  if (!o.no_scaling) {
    const topo::Topology cluster = topo::parse_topology_json(input.plan.cluster, o.plan + ":/cluster");
    planner::SearchRequest request = planner::replan_request(input.plan);
    request.simulation.models = sim::make_cost_models();
    request.progress = true;
    const int max_nodes = o.max_nodes > 0 ? o.max_nodes : 2 * cluster.nodes();
    input.scaling = planner::scaling_table(request, cluster, planner::default_node_counts(max_nodes));
  }
  const std::string text = html ? planner::render_html(input) : planner::render_markdown(input);
  write_file_atomically(o.output, text, "the report");
  fmt::print(stderr, "report written to {}\n", o.output);
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand("report", "Write a self-contained capacity report (HTML or Markdown) of a plan");
  cmd->add_option("plan", options->plan, "A plan file (burst.plan/1)")->required();
  cmd->add_option("-o,--output", options->output, "report.html or report.md")->required();
  cmd->add_option("--max-nodes", options->max_nodes, "Largest node count of the scaling table (default: twice the plan's)")
      ->check(kAtLeastOne);
  cmd->add_flag("--no-scaling", options->no_scaling, "Leave the scaling table out (faster)");
  cmd->callback([options] { run(*options); });
}

}  // namespace burst::cli
