#include "tools/jobs/simulation.hpp"

#include <fmt/format.h>

namespace burst::jobs {

std::vector<std::string> strategies_to_simulate(const std::string& strategy) {
  return strategy == "all" ? sim::family_names() : std::vector{strategy};
}

std::vector<sim::LayerSimulation> simulate_strategies(const Job& job, const std::vector<std::string>& names,
                                                      const AttentionKnobOverrides& overrides,
                                                      const std::string& engine, bool progress, sim::LayerRuns* runs,
                                                      bool every_rank) {
  sim::LayerSimOptions options;
  options.engine = engine;
  options.reduce_copies = !every_rank;
  options.fold_rings = !every_rank;
  options.models = job.models;
  options.progress = progress;
  std::vector<sim::LayerSimulation> results;
  for (const auto& name : names) {
    sim::AttentionStrategy strategy = sim::strategy_preset(name, job.shape, *job.topology);
    overrides.apply_to(strategy);
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
