#include "tools/jobs/simulation.hpp"

#include <fmt/format.h>

#include "common/parallelism.hpp"

namespace burst::jobs {
namespace {

void apply_overrides(const StrategyOverrides& o, sim::AttentionStrategy& s) {
  if (o.layout) s.layout = parse_layout(*o.layout, "--layout");
  if (o.backward) s.backward = parse_backward_mode(*o.backward, "--backward");
  if (o.ring) s.ring = parse_ring_kind(*o.ring, "--ring");
  if (o.inner) s.inner = *o.inner;
  if (o.ulysses) s.ulysses = *o.ulysses;
  if (o.no_overlap) s.overlap = false;
}

}  // namespace

std::vector<std::string> strategies_to_simulate(const std::string& strategy) {
  return strategy == "all" ? sim::family_names() : std::vector{strategy};
}

std::vector<sim::LayerSimulation> simulate_strategies(const Job& job, const std::vector<std::string>& names,
                                                      const StrategyOverrides& overrides, const std::string& engine,
                                                      bool progress, sim::LayerRuns* runs) {
  sim::LayerSimOptions options;
  options.engine = engine;
  options.models = job.models;
  options.progress = progress;
  std::vector<sim::LayerSimulation> results;
  for (const auto& name : names) {
    sim::AttentionStrategy strategy = sim::strategy_preset(name, job.shape, *job.topology);
    apply_overrides(overrides, strategy);
    if (progress) fmt::print(stderr, "simulating {} ...\n", name);
    results.push_back(sim::simulate_attention_layer(job.shape, job.mask, strategy, *job.topology, options, runs));
  }
  return results;
}

Json simulation_json(const Job& job, const std::string& engine, const std::vector<sim::LayerSimulation>& results) {
  Json out = job_json(job);
  out["engine"] = engine;
  Json list = Json::array();
  for (const auto& r : results) list.push_back(sim::to_json(r));
  if (results.size() == 1) {
    out.update(list.front());
  } else {
    out["strategies"] = list;
  }
  return out;
}

}  // namespace burst::jobs
