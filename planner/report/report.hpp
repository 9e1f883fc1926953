// The capacity report: what a person hands to a manager. The job, the cluster, the chosen
// plan and the peers side by side, where each iteration's time goes (compute, exposed
// communication, recompute, optimizer), where each GPU's memory goes, and how throughput
// scales with nodes; charts are inline SVG, so the HTML opens offline in any browser and the
// Markdown renders on any forge (the same SVGs are embedded as data: images there).
#pragma once

#include <string>
#include <vector>

#include "planner/contract/plan.hpp"

namespace burst::planner {

// One row of the scaling table: the best plan on this many nodes (feasible or not).
struct ScalingRow {
  int nodes = 0;
  int gpus = 0;
  std::string strategy;        // family of the best plan ("" when nothing runs)
  bool feasible = false;
  std::string reason;          // why nothing fits, when infeasible
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;
  double memory_total_bytes = 0;  // per GPU
};

struct ReportInput {
  plan::Plan plan;
  std::vector<ScalingRow> scaling;  // may be empty: the section then says it was not computed
};

[[nodiscard]] std::string render_markdown(const ReportInput& input);
[[nodiscard]] std::string render_html(const ReportInput& input);

}  // namespace burst::planner
