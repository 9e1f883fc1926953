// The capacity report: what a person hands to a manager. The job, the cluster, the chosen
// plan and the peers side by side, where each iteration's time goes (compute, exposed
// communication, recompute, optimizer), where each GPU's memory goes, and how throughput
// scales with nodes; pictures of the cluster with the plan's rings, of one attention layer's
// predicted timeline on a few ranks, and (given a run's JSON) of measured against predicted
// figures. Charts are inline SVG, so the HTML opens offline in any browser and the
// Markdown renders on any forge (the same SVGs are embedded as data: images there).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "planner/report/run_comparison.hpp"

namespace burst::planner {

// One row of the scaling table: the best plan on this many nodes (feasible or not).
struct ScalingRow {
  int nodes = 0;
  int gpus = 0;
  std::string strategy;  // family of the best plan ("" when nothing runs)
  bool feasible = false;
  std::string reason;  // why nothing fits, when infeasible
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;
  double memory_total_bytes = 0;  // per GPU
};

// One bar of an attention layer's predicted timeline: a compute task or a send of one rank,
// as the simulator scheduled it (the events `burst simulate --trace` writes).
struct TimelineBar {
  int rank = 0;
  bool send = false;
  double start_s = 0, end_s = 0;  // from the start of the forward; the backward follows it
};

struct Timeline {
  std::vector<int> ranks;  // the ranks drawn, top to bottom
  int world = 0;           // every rank of the plan
  double forward_s = 0, backward_s = 0;
  std::vector<TimelineBar> bars;
};

struct ReportInput {
  plan::Plan plan;
  std::vector<ScalingRow> scaling;  // may be empty: the section then says it was not computed
  Timeline timeline;                // no ranks: the section says it was not simulated
  std::optional<RunFigures> run;    // a run of this plan (`burst report --run run.json`)
};

[[nodiscard]] std::string render_markdown(const ReportInput& input);
[[nodiscard]] std::string render_html(const ReportInput& input);

}  // namespace burst::planner
