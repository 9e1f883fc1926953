// What `burst simulate` computes: one attention layer (forward + backward) per strategy, each
// the family's preset for the job with the caller's overrides of its attention knobs (what-if
// questions of one, common/strategy_knobs.hpp), and the JSON it prints with --json.
#pragma once

#include <string>
#include <vector>

#include "common/json_reader.hpp"
#include "common/strategy_knobs.hpp"
#include "simulator/layer_simulation.hpp"
#include "tools/jobs/job.hpp"

namespace burst::jobs {

// `strategy`: one name of sim::family_names(), or "all" for every one of them.
[[nodiscard]] std::vector<std::string> strategies_to_simulate(const std::string& strategy);

// Simulates each named strategy in turn. `runs`: the phase graphs and results, for a trace
// (one strategy only); `progress`: "simulating NAME ..." on stderr before each; `every_rank`:
// simulate every copy and every ring rank even where one stands for the others (a check).
[[nodiscard]] std::vector<sim::LayerSimulation> simulate_strategies(
    const Job& job, const std::vector<std::string>& names, const AttentionKnobOverrides& overrides,
    const std::string& engine, bool progress, sim::LayerRuns* runs = nullptr, bool every_rank = false);

// The job, the engine, then the one result's fields, or "strategies": every result.
[[nodiscard]] Json simulation_json(const Job& job, const std::string& engine,
                                   const std::vector<sim::LayerSimulation>& results);

}  // namespace burst::jobs
