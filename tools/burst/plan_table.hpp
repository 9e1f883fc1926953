// The tables people read on a terminal: the ranked families of one search (burst plan) and
// the scaling table (burst capacity, burst report).
#pragma once

#include <cstdio>
#include <vector>

#include "planner/report/report.hpp"
#include "planner/search/search.hpp"

namespace burst::cli {

// Feasible families first, fastest first; then the infeasible ones with why.
void print_ranked_table(std::FILE* out, const planner::SearchResult& result);
void print_scaling_table(std::FILE* out, const std::vector<planner::ScalingRow>& rows);

}  // namespace burst::cli
