#include "tools/burst/plan_options.hpp"

#include "common/error.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "planner/search/candidates.hpp"
#include "simulator/engine/engine.hpp"
#include "tools/burst/validators.hpp"

namespace burst::cli {

void add_plan_options(CLI::App& cmd, PlanOptions& o) {
  add_job_options(cmd, o.job);
  cmd.add_option("--memory-budget", o.memory_budget, "Memory per GPU a plan may use, e.g. 64GiB (default: the GPU's)");
  cmd.add_option("--strategy", o.strategy,
                 "Choose only within this family (" + text::join(planner::planner_families()) + ")");
  cmd.add_option("--engine", o.engine, "Simulation engine: event (contention) or analytic (fast)")
      ->check(CLI::IsMember(sim::engine_names()))
      ->capture_default_str();
  cmd.add_option("--max-candidates", o.max_candidates, "Step budget: candidates scored at most")
      ->check(kAtLeastOne)
      ->capture_default_str();
}

PlanningJob resolve_planning(const PlanOptions& o) {
  Problems problems;
  PlanningJob p;
  try {
    p.job = resolve_job(o.job);
  } catch (const Error& e) {
    for (const auto& problem : e.problems()) problems.add(problem);
  }
  if (!o.memory_budget.empty()) {
    try {
      p.request.memory_budget_bytes = units::parse_bytes(o.memory_budget, "--memory-budget");
      if (!(p.request.memory_budget_bytes > 0)) {
        problems.add({"--memory-budget", "must be positive", "a size, e.g. 64GiB", ""});
      }
    } catch (const Error& e) {
      for (const auto& problem : e.problems()) problems.add(problem);
    }
  }
  if (!o.strategy.empty()) {
    const auto families = planner::planner_families();
    if (std::find(families.begin(), families.end(), o.strategy) == families.end()) {
      problems.add({"--strategy", "unknown strategy '" + o.strategy + "'", text::join(families),
                    text::did_you_mean(o.strategy, families)});
    }
  }
  problems.throw_if_any();
  p.request.job.model = p.job.model;
  p.request.job.seq = p.job.shape.seq;
  p.request.job.batch = p.job.shape.batch;
  p.request.job.mask = p.job.mask;
  p.request.job.dtype_bytes = p.job.shape.dtype_bytes;
  p.request.only_family = o.strategy;
  p.request.simulation.engine = o.engine;
  p.request.simulation.models = p.job.models;
  p.request.max_candidates = o.max_candidates;
  p.request.progress = true;
  return p;
}

}  // namespace burst::cli
