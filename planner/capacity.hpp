// Capacity planning: the best plan as the cluster grows, node count by node count, and the
// fewest nodes on which the job fits at all. The job stays the same (one sequence of the
// given length per iteration), so more nodes means fewer tokens per GPU: memory per GPU falls
// and, past some point, communication stops hiding behind the shrinking compute.
#pragma once

#include <vector>

#include "planner/report/report.hpp"
#include "planner/search/search.hpp"

namespace burst::planner {

// Powers of two from 1 up to max_nodes (and max_nodes itself).
[[nodiscard]] std::vector<int> default_node_counts(int max_nodes);

// One row per node count, in order; fewer when Ctrl-C cut it short (the smallest counts, done).
[[nodiscard]] std::vector<ScalingRow> scaling_table(const SearchRequest& request, const topo::Topology& topology,
                                                    const std::vector<int>& node_counts);

// The row of the fewest nodes that fit, or nullptr.
[[nodiscard]] const ScalingRow* fewest_fitting(const std::vector<ScalingRow>& rows);

// The scaling row of one search (the best plan, or the least bad one when nothing fits).
[[nodiscard]] ScalingRow scaling_row(const SearchResult& result, const topo::Topology& topology);

}  // namespace burst::planner
