// The scaling table (see capacity.hpp).
#include "planner/capacity.hpp"

#include <algorithm>

#include "common/interrupt.hpp"
#include "common/progress.hpp"

namespace burst::planner {

std::vector<int> default_node_counts(int max_nodes) {
  std::vector<int> counts;
  for (int n = 1; n < max_nodes; n *= 2) counts.push_back(n);
  counts.push_back(std::max(1, max_nodes));
  return counts;
}

ScalingRow scaling_row(const SearchResult& result, const topo::Topology& topology) {
  ScalingRow row;
  row.nodes = topology.nodes();
  row.gpus = topology.gpu_count();
  const Evaluated* best = result.chosen_plan();
  if (best == nullptr) {
    // Nothing fits: report the applicable family needing the least memory, and why.
    for (const Evaluated& e : result.best_per_family) {
      if (!e.sim.not_applicable.empty()) continue;
      if (best == nullptr || e.sim.memory.total() < best->sim.memory.total()) best = &e;
    }
    row.reason = best != nullptr ? best->family + " " + best->reason : "no strategy applies";
    if (best == nullptr) return row;
  }
  row.strategy = best->family;
  row.feasible = best->feasible;
  row.step_time_s = best->sim.step_time_s;
  row.tokens_per_s_per_gpu = best->sim.tokens_per_s_per_gpu;
  row.mfu = best->sim.mfu;
  row.memory_total_bytes = best->sim.memory.total();
  return row;
}

std::vector<ScalingRow> scaling_table(const SearchRequest& request, const topo::Topology& topology,
                                      const std::vector<int>& node_counts) {
  std::vector<ScalingRow> rows;
  SearchRequest quiet = request;
  quiet.progress = false;
  // A search's work grows with the square of the GPU count (see search.cpp's candidate_work):
  // the estimate weighs each row so, not by the small clusters that come first.
  std::vector<double> work;
  for (const int nodes : node_counts) {
    const double gpus = static_cast<double>(nodes) * topology.gpus_per_node();
    work.push_back(gpus * gpus);
  }
  Progress progress("scaling", work, request.progress);
  for (const int nodes : node_counts) {
    if (interrupt_requested()) break;
    const topo::Topology cluster = topology.with_nodes(nodes);
    rows.push_back(scaling_row(search(quiet, cluster), cluster));
    progress.update(static_cast<std::int64_t>(rows.size()));
  }
  progress.finish();
  return rows;
}

const ScalingRow* fewest_fitting(const std::vector<ScalingRow>& rows) {
  const ScalingRow* best = nullptr;
  for (const ScalingRow& r : rows) {
    if (r.feasible && (best == nullptr || r.nodes < best->nodes)) best = &r;
  }
  return best;
}

}  // namespace burst::planner
