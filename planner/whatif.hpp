// What-if sweeps: the best plan over a grid of cluster and job changes. Each `--vary
// knob=v1,v2,...` adds a dimension; the grid is their cartesian product, first knob slowest.
// Knobs: nodes, nets_per_node (network ports per node), intra_bw (NVLink bandwidth per GPU,
// e.g. 450GBps), seq (tokens, e.g. 2M), memory_budget (per GPU, e.g. 64GiB), tp, dp, batch,
// checkpoint (none, full or attn_stash for every family; own: each family's own).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/json_reader.hpp"
#include "planner/report/report.hpp"
#include "planner/search/search.hpp"

namespace burst::planner {

struct Variation {
  std::string knob;
  std::vector<std::string> values;  // as written, validated by parse_variations
};

// "knob=v1,v2": every problem at once (unknown knob with did-you-mean, a value that does not
// parse, a knob given twice), as burst::Error.
[[nodiscard]] std::vector<Variation> parse_variations(const std::vector<std::string>& specs);

// How many points `grid` has: the product of its lists' sizes, saturating at kSizeCeiling
// (common/saturating.hpp, 2^63) instead of wrapping: five lists of 8192 values, which a command
// line holds, multiply to 2^65, which 64 bits wrapped to 0 points.
[[nodiscard]] std::uint64_t grid_points(const std::vector<Variation>& grid);

struct WhatIfPoint {
  std::vector<std::pair<std::string, std::string>> setting;  // (knob, value) per dimension
  ScalingRow outcome;
};

// The points in grid order; fewer when Ctrl-C cut it short (common/interrupt.hpp): those done.
// The caller bounds grid_points(grid) first (each point is a whole plan search).
[[nodiscard]] std::vector<WhatIfPoint> what_if(const SearchRequest& request, const topo::Topology& topology,
                                               const std::vector<Variation>& grid);

// One header line, then one line per point: the knobs, then the outcome.
[[nodiscard]] std::string what_if_csv(const std::vector<WhatIfPoint>& points);
// The same columns as JSON, one object per point: {"setting": {knob: value, ...}, "gpus",
// "strategy", "feasible", "tokens_per_s_per_gpu", "step_time_s", "mfu", "memory_bytes_per_gpu",
// "reason"}, numbers at full precision.
[[nodiscard]] Json what_if_json(const std::vector<WhatIfPoint>& points);

}  // namespace burst::planner
