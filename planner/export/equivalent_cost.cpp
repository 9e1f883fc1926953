// Simulating a plan's job under another strategy (see equivalent_cost.hpp).
#include "planner/detail/export/equivalent_cost.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/units.hpp"
#include "planner/plan_builder.hpp"
#include "simulator/attention/families.hpp"
#include "simulator/training/training.hpp"
#include "topologies/json_format.hpp"

namespace burst::exporter {
Predicted predict_strategy(const plan::Plan& plan, const plan::Strategy& strategy, const std::string& source,
                           const std::string& allocates_like, std::optional<sim::LinearPrecision> linears,
                           sim::Fp8Library fp8_library) {
  if (!plan.cluster.is_object()) {
    throw Error(Problem{source + ":/cluster", "the plan carries no cluster to simulate its equivalent on",
                        "a burst.topology/1 document", "re-plan it with this version of burst plan"});
  }
  const topo::Topology cluster = topo::parse_topology_json(plan.cluster, source + ":/cluster");
  planner::SearchRequest request = planner::replan_request(plan);
  if (linears) request.job.linears = *linears;
  request.job.fp8_library = fp8_library;
  sim::TrainingStrategy training = planner::training_strategy(strategy);
  if (!allocates_like.empty()) {  // as that framework allocates, and as its code runs the ring
    const sim::FamilyTraits& framework = sim::family_traits(allocates_like);
    training.memory = framework.memory;
    training.attention.code = framework.code;
  }
  const sim::IterationSimulation sim = sim::simulate_iteration(request.job, training, cluster, request.simulation);
  Predicted p;
  if (!sim.not_applicable.empty()) {
    p.reason = "cannot run: " + sim.not_applicable;
    return p;
  }
  p.runs = true;
  p.step_time_s = sim.step_time_s;
  p.tokens_per_s_per_gpu = sim.tokens_per_s_per_gpu;
  p.memory_bytes = sim.memory.total();
  const double budget = plan.job.memory_budget_bytes > 0 ? plan.job.memory_budget_bytes : cluster.gpu().memory_bytes;
  p.fits = p.memory_bytes <= budget;
  if (!p.fits) {
    p.reason =
        fmt::format("needs {} per GPU, budget {}", units::human_bytes(p.memory_bytes), units::human_bytes(budget));
  }
  return p;
}

}  // namespace burst::exporter
