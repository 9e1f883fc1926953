// burst.plan(...): `burst plan --json` (the burst.plan/2 dict) plus "search", the ranked
// table; burst.explain(plan): `burst explain`; burst.whatif(vary={...}, ...): `burst whatif`'s
// grid as data.
#include "planner/explain.hpp"
#include "planner/whatif.hpp"
#include "python/arguments.hpp"
#include "python/bindings.hpp"
#include "python/json_bridge.hpp"
#include "tools/jobs/planning.hpp"

namespace py = pybind11;

namespace burst::python {
namespace {

const std::string kPlanKeywords =
    "Keywords: topology, model, seq (required); nodes, per_node, nvlink_from, gpu_from, nic_speed, vocab, batch,\n"
    "global_batch_tokens, mask, dtype, compute_model, comm_model, calibration, memory_budget, memory_margin,\n"
    "strategy, tp, dp, engine, max_candidates, fp8_linears, checkpoint.";

jobs::PlanningJob resolve(const jobs::PlanOptions& options) {
  jobs::PlanningJob p = jobs::resolve_planning(options);
  p.request.progress = false;  // the CLI's progress lines are for a terminal
  return p;
}

py::object make_plan(const py::kwargs& kwargs) {
  Keywords k(kwargs);
  jobs::PlanOptions options;
  read_planning(k, options);
  k.finish();
  const jobs::PlanningJob p = resolve(options);
  planner::SearchResult result;
  {
    const py::gil_scoped_release free_python;
    result = planner::search(p.request, *p.job.topology);
  }
  Json out = plan::to_json(jobs::build_chosen_plan(result, p));
  out["search"] = jobs::ranked_json(result);
  return to_python(out);
}

py::object whatif(const py::kwargs& kwargs) {
  Keywords k(kwargs);
  jobs::PlanOptions options;
  read_planning(k, options);
  std::vector<std::string> specs;
  k.variations("vary", specs);
  k.finish();
  const auto grid = planner::parse_variations(specs);
  const jobs::PlanningJob p = resolve(options);
  std::vector<planner::WhatIfPoint> points;
  {
    const py::gil_scoped_release free_python;
    points = planner::what_if(p.request, *p.job.topology, grid);
  }
  return to_python(Json{{"job", jobs::planning_json(p)}, {"points", planner::what_if_json(points)}});
}

}  // namespace

void bind_plan(py::module_& m) {
  static const std::string plan_doc =
      "The fastest plan that fits in memory: the burst.plan/2 dict `burst plan --json` prints, plus\n"
      "'search': the ranked table ({'rows': [...], 'candidates_scored', ...}).\n" +
      kPlanKeywords;
  m.def("plan", &make_plan, plan_doc.c_str());
  m.def(
      "explain",
      [](const py::object& plan) {
        std::string source;
        return planner::explain_plan(read_plan_argument(plan, source));
      },
      py::arg("plan"), "Why the plan (a dict from burst.plan() or a file's path) won, as `burst explain` says it.");
  static const std::string whatif_doc =
      "The best plan at each point of a grid: vary={'nodes': [4, 8], 'intra_bw': ['200GBps']}, first\n"
      "knob slowest. Returns {'job', 'points': [{'setting', 'strategy', 'tokens_per_s_per_gpu', ...}]}.\n" +
      kPlanKeywords;
  m.def("whatif", &whatif, whatif_doc.c_str());
}

}  // namespace burst::python
