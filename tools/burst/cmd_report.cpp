// burst report plan.json -o report.html|report.md: the capacity report of a plan, with the
// scaling table recomputed on the plan's own cluster (its burst.topology/1 document) and job,
// and the predicted timeline of one attention layer on the first ranks: the plan's attention
// simulated exactly as `burst simulate --trace` does (simulate_attention_layer keeping the
// phase graphs and the engine's task times), forward then backward.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/escape.hpp"
#include "common/json_reader.hpp"
#include "planner/capacity.hpp"
#include "planner/plan_builder.hpp"
#include "planner/report/report.hpp"
#include "simulator/cost_model.hpp"
#include "simulator/layer_simulation.hpp"
#include "tools/burst/commands.hpp"
#include "tools/burst/validators.hpp"
#include "topologies/json_format.hpp"

namespace burst::cli {
namespace {

struct ReportOptions {
  std::string plan;
  std::string output;
  std::string run;    // a run's JSON (burst run --json), or ""
  int max_nodes = 0;  // 0: twice the plan's nodes
  bool no_scaling = false;
  bool no_timeline = false;
};

constexpr int kTimelineRanks = 4;

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The plan's attention layer on its own cluster, and the tasks of its first ranks as bars.
planner::Timeline predicted_timeline(const plan::Plan& plan, const topo::Topology& cluster) {
  const plan::Strategy& s = plan.strategy;
  // One micro-batch's layer under the plan's tensor and data parallelism, as the plan priced it.
  const sim::AttentionShape shape =
      sim::attention_shape(planner::replan_request(plan).job, planner::training_strategy(s));
  const sim::AttentionStrategy strategy = planner::attention_strategy(s);
  sim::LayerSimOptions options;
  options.models = sim::make_cost_models();
  sim::LayerRuns runs;
  const sim::LayerSimulation layer =
      sim::simulate_attention_layer(shape, plan.job.mask, strategy, cluster, options, &runs);
  planner::Timeline t;
  if (!layer.not_applicable.empty()) return t;  // the section then says it was not simulated
  t.world = static_cast<int>(plan.ranks.size());
  t.forward_s = runs.forward.result.makespan_s;
  t.backward_s = runs.backward.result.makespan_s;
  std::map<int, int> rank_of_gpu;  // the simulator numbers GPUs node-major
  for (const auto& r : plan.ranks) rank_of_gpu[r.node * cluster.gpus_per_node() + r.local] = r.rank;
  for (const auto& [gpu, rank] : rank_of_gpu) {
    if (static_cast<int>(t.ranks.size()) < kTimelineRanks) t.ranks.push_back(rank);
  }
  for (const auto* phase : {&runs.forward, &runs.backward}) {
    const double offset = phase == &runs.forward ? 0.0 : t.forward_s;
    for (std::size_t id = 0; id < phase->graph.size(); ++id) {
      const sim::Task& task = phase->graph.tasks()[id];
      const auto rank = rank_of_gpu.find(task.gpu);
      if (rank == rank_of_gpu.end() || std::find(t.ranks.begin(), t.ranks.end(), rank->second) == t.ranks.end())
        continue;
      const sim::TaskTime& time = phase->result.times[id];
      t.bars.push_back({rank->second, task.kind == sim::TaskKind::Transfer, offset + time.start, offset + time.end});
    }
  }
  return t;
}

void run(const ReportOptions& o) {
  const bool html = ends_with(o.output, ".html") || ends_with(o.output, ".htm");
  if (!html && !ends_with(o.output, ".md")) {
    throw Error(
        Problem{"-o", fmt::format("'{}': unknown report format", o.output), "a name ending in .html or .md", ""});
  }
  planner::ReportInput input;
  input.plan = plan::read_plan(o.plan);
  if (!o.run.empty()) input.run = planner::read_run(read_json_file(o.run), o.run);
  const topo::Topology cluster = topo::parse_topology_json(input.plan.cluster, o.plan + ":/cluster");
  if (!o.no_timeline) input.timeline = predicted_timeline(input.plan, cluster);
  if (!o.no_scaling) {
    planner::SearchRequest request = planner::replan_request(input.plan);
    request.simulation.models = sim::make_cost_models();
    request.progress = true;
    const int max_nodes = o.max_nodes > 0 ? o.max_nodes : 2 * cluster.nodes();
    input.scaling = planner::scaling_table(request, cluster, planner::default_node_counts(max_nodes));
  }
  const std::string text = html ? planner::render_html(input) : planner::render_markdown(input);
  write_file_atomically(o.output, text, "the report");
  fmt::print(stderr, "report written to {}\n", escape::terminal(o.output));
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand("report", "Write a self-contained capacity report (HTML or Markdown) of a plan");
  cmd->add_option("plan", options->plan, "A plan file (burst.plan/2)")->required();
  cmd->add_option("-o,--output", options->output, "report.html or report.md")->required();
  cmd->add_option("--run", options->run,
                  "A run of this plan (the JSON of burst run --json): measured beside predicted");
  cmd->add_option("--max-nodes", options->max_nodes,
                  "Largest node count of the scaling table (default: twice the plan's)")
      ->check(kAtLeastOne);
  cmd->add_flag("--no-scaling", options->no_scaling, "Leave the scaling table out (faster)");
  cmd->add_flag("--no-timeline", options->no_timeline, "Leave the predicted attention-layer timeline out (faster)");
  cmd->callback([options] { run(*options); });
}

}  // namespace burst::cli
