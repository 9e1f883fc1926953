// The options every planning command shares (plan, capacity, whatif): the job, the memory
// budget, the strategy restriction, the engine and the search's step budget; their resolution
// into a search request; and what `burst plan` makes of the search: the chosen plan (or the
// error saying why none), and the families ranked as its table shows them.
#pragma once

#include <string>
#include <vector>

#include "common/json_reader.hpp"
#include "plan/plan.hpp"
#include "planner/search/search.hpp"
#include "tools/jobs/job.hpp"

namespace burst::jobs {

struct PlanOptions {
  JobOptions job;
  std::string memory_budget;  // "" : the GPU's memory
  std::string memory_margin;  // "" : none
  std::string strategy;       // "" : every family
  int tp = 0;                 // 0: every tensor-parallel degree the node allows
  int dp = 0;                 // 0: every data-parallel degree the batch allows
  std::string engine = "event";
  int max_candidates = 20000;
  bool fp8_linears = false;  // the linear layers' GEMMs in FP8 (plan /job/linears)
  std::string checkpoint;    // "": each family's own; else none, full or attn_stash for every family
};

struct PlanningJob {
  Job job;
  planner::SearchRequest request;
};
// Collects every problem before failing (burst::Error). The request reports progress on stderr.
[[nodiscard]] PlanningJob resolve_planning(const PlanOptions& options);
// describe_job and job_json (job.hpp), with the linear layers' precision where it is FP8 and the
// checkpoint policy where --checkpoint fixes it.
[[nodiscard]] std::string describe_planning(const PlanningJob& planning);
[[nodiscard]] Json planning_json(const PlanningJob& planning);

// The plan of the search's chosen family. Nothing chosen is a burst::Error: every family's
// reason when none runs at all, otherwise "no plan fits" with the budget and what would help.
[[nodiscard]] plan::Plan build_chosen_plan(const planner::SearchResult& result, const PlanningJob& planning);

// The best candidate of each family as the ranked table lists them: feasible first, fastest
// first; then the infeasible ones, in sim::family_names() order.
[[nodiscard]] std::vector<const planner::Evaluated*> ranked_families(const planner::SearchResult& result);

// The ranked table as data: {"rows": [{"strategy", "tp", "dp", "micro_batch", "chosen", "feasible", "reason", and when
// the family runs "tokens_per_s_per_gpu", "mfu", "step_time_s", "memory_per_gpu_bytes", "exposed_comm_s"}],
// "candidates_scored", "stopped_at_budget", "memory_budget_bytes"}.
[[nodiscard]] Json ranked_json(const planner::SearchResult& result);

}  // namespace burst::jobs
