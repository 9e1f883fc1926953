#include "tools/jobs/planning.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "planner/plan_builder.hpp"
#include "planner/search/candidates.hpp"

namespace burst::jobs {

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
  if (!o.memory_margin.empty()) {
    try {
      p.request.memory_margin_bytes = units::parse_bytes(o.memory_margin, "--memory-margin");
      if (p.request.memory_margin_bytes < 0) {
        problems.add({"--memory-margin", "must not be negative", "a size, e.g. 4GiB", ""});
      }
    } catch (const Error& e) {
      for (const auto& problem : e.problems()) problems.add(problem);
    }
  }
  if (o.fp8_linears && p.job.topology) {
    if (auto problem = sim::fp8_linears_problem(p.job.topology->gpu(), "--fp8-linears")) problems.add(*problem);
  }
  if (o.fp8_linears && o.job.dtype != "bf16") {
    problems.add({"--fp8-linears", fmt::format("with --dtype {}", o.job.dtype), "--dtype bf16",
                  "TransformerEngine's and torchao's FP8 recipes run under bf16 mixed precision, as the exports "
                  "write them"});
  }
  if (!o.strategy.empty()) {
    const auto families = sim::family_names();
    if (std::find(families.begin(), families.end(), o.strategy) == families.end()) {
      problems.add({"--strategy", "unknown strategy '" + o.strategy + "'", text::join(families),
                    text::did_you_mean(o.strategy, families)});
    }
  }
  if (!o.checkpoint.empty()) {
    try {
      p.request.checkpoint = planner::parse_checkpoint_for_every_family(o.checkpoint, "--checkpoint");
    } catch (const Error& e) {
      for (const auto& problem : e.problems()) problems.add(problem);
    }
  }
  problems.throw_if_any();
  p.request.job.model = p.job.model;
  p.request.job.seq = p.job.shape.seq;
  p.request.job.batch = p.job.shape.batch;
  p.request.job.mask = p.job.mask;
  p.request.job.dtype_bytes = p.job.shape.dtype_bytes;
  p.request.job.linears = o.fp8_linears ? sim::LinearPrecision::Fp8 : sim::LinearPrecision::Bf16;
  p.request.only_family = o.strategy;
  p.request.only_tp = o.tp;
  p.request.only_dp = o.dp;
  p.request.kernel_path = o.job.kernel_path;
  p.request.simulation.engine = o.engine;
  p.request.simulation.models = p.job.models;
  p.request.max_candidates = o.max_candidates;
  p.request.progress = true;
  return p;
}

std::string describe_planning(const PlanningJob& planning) {
  std::string job = describe_job(planning.job);
  if (planning.request.job.linears == sim::LinearPrecision::Fp8) job += "\nlinear layers: FP8 GEMMs";
  if (planning.request.checkpoint) {
    job += fmt::format("\ncheckpointing: {} for every family (--checkpoint)", to_string(*planning.request.checkpoint));
  }
  return job;
}

Json planning_json(const PlanningJob& planning) {
  Json out = job_json(planning.job);
  if (planning.request.job.linears == sim::LinearPrecision::Fp8) {
    out["linears"] = sim::plan_linears(planning.request.job.linears);
  }
  if (planning.request.checkpoint) out["checkpoint"] = to_string(*planning.request.checkpoint);
  return out;
}

plan::Plan build_chosen_plan(const planner::SearchResult& result, const PlanningJob& p) {
  if (result.chosen_plan() == nullptr) {
    const bool none_runs = std::all_of(result.best_per_family.begin(), result.best_per_family.end(),
                                       [](const planner::Evaluated& e) { return !e.sim.not_applicable.empty(); });
    if (none_runs) {
      std::vector<Problem> problems;
      for (const auto& e : result.best_per_family) problems.push_back({e.family, e.sim.not_applicable, "", ""});
      throw Error(std::move(problems));
    }
    const std::string& family = p.request.only_family;
    const std::string scope = family.empty() ? "no strategy" : "'" + family + "'";
    const double margin = p.request.memory_margin_bytes;
    if (margin > 0) {
      throw Error(Problem{"--memory-budget, --memory-margin",
                          fmt::format("no plan fits: {} runs in {} per GPU less the {} margin on {} GPUs", scope,
                                      units::human_bytes(result.memory_budget_bytes), units::human_bytes(margin),
                                      p.job.topology->gpu_count()),
                          "",
                          margin >= result.memory_budget_bytes
                              ? "the margin leaves nothing of the budget: a smaller --memory-margin"
                              : "more nodes (see burst capacity), a smaller --memory-margin, or a shorter --seq"});
    }
    throw Error(Problem{"--memory-budget",
                        fmt::format("no plan fits: {} runs in {} per GPU on {} GPUs", scope,
                                    units::human_bytes(result.memory_budget_bytes), p.job.topology->gpu_count()),
                        "", "more nodes (see burst capacity), a larger --memory-budget, or a shorter --seq"});
  }
  return planner::build_plan(result, p.request, *p.job.topology);
}

std::vector<const planner::Evaluated*> ranked_families(const planner::SearchResult& result) {
  std::vector<const planner::Evaluated*> rows;
  for (const auto& e : result.best_per_family) rows.push_back(&e);
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    if (a->feasible != b->feasible) return a->feasible;
    return a->feasible && a->sim.tokens_per_s_per_gpu > b->sim.tokens_per_s_per_gpu;
  });
  return rows;
}

Json ranked_json(const planner::SearchResult& result) {
  Json rows = Json::array();
  for (const planner::Evaluated* e : ranked_families(result)) {
    Json row{{"strategy", e->family},
             {"tp", e->sim.strategy.tp},
             {"dp", e->sim.strategy.dp},
             {"micro_batch", e->sim.strategy.micro_batch},
             {"chosen", e == result.chosen_plan()},
             {"feasible", e->feasible},
             {"reason", e->reason}};
    const auto& s = e->sim;
    if (s.not_applicable.empty()) {
      row["tokens_per_s_per_gpu"] = s.tokens_per_s_per_gpu;
      row["mfu"] = s.mfu;
      row["step_time_s"] = s.step_time_s;
      row["memory_per_gpu_bytes"] = s.memory.total();
      row["exposed_comm_s"] = s.time.attention_exposed_comm + s.time.zero_exposed_comm + s.time.tp_exposed_comm;
    }
    rows.push_back(std::move(row));
  }
  return Json{{"rows", std::move(rows)},
              {"candidates_scored", result.candidates_evaluated},
              {"stopped_at_budget", result.stopped_at_budget},
              {"memory_budget_bytes", result.memory_budget_bytes}};
}

}  // namespace burst::jobs
