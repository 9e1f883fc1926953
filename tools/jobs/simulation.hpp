// What `burst simulate` computes: one attention layer (forward + backward) per strategy, each
// the family's preset for the job with the caller's overrides (what-if questions of one), and
// the JSON it prints with --json.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/json_reader.hpp"
#include "simulator/layer_simulation.hpp"
#include "tools/jobs/job.hpp"

namespace burst::jobs {

// Overrides of a strategy's defaults; unset ones keep the preset's.
struct StrategyOverrides {
  std::optional<std::string> layout, backward, ring;
  std::optional<int> inner, ulysses;
  bool no_overlap = false;
};

// `strategy`: one name of sim::family_names(), or "all" for every one of them.
[[nodiscard]] std::vector<std::string> strategies_to_simulate(const std::string& strategy);

// Simulates each named strategy in turn. `runs`: the phase graphs and results, for a trace
// (one strategy only); `progress`: "simulating NAME ..." on stderr before each.
[[nodiscard]] std::vector<sim::LayerSimulation> simulate_strategies(const Job& job, const std::vector<std::string>& names,
                                                                    const StrategyOverrides& overrides,
                                                                    const std::string& engine, bool progress,
                                                                    sim::LayerRuns* runs = nullptr);

// The job, the engine, then the one result's fields, or "strategies": every result.
[[nodiscard]] Json simulation_json(const Job& job, const std::string& engine,
                                   const std::vector<sim::LayerSimulation>& results);

}  // namespace burst::jobs
