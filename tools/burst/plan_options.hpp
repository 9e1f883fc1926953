// The options every planning command shares (plan, capacity, whatif): the job, the memory
// budget, the strategy restriction, the engine and the search's step budget; and their
// resolution into a search request.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "planner/search/search.hpp"
#include "tools/burst/job_options.hpp"

namespace burst::cli {

struct PlanOptions {
  JobOptions job;
  std::string memory_budget;  // "" : the GPU's memory
  std::string strategy;       // "" : every family
  std::string engine = "event";
  int max_candidates = 20000;
};

void add_plan_options(CLI::App& cmd, PlanOptions& options);

struct PlanningJob {
  Job job;
  planner::SearchRequest request;
};
// Collects every problem before failing (burst::Error).
[[nodiscard]] PlanningJob resolve_planning(const PlanOptions& options);

}  // namespace burst::cli
