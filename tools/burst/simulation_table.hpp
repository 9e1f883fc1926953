// The side-by-side table of `burst simulate`: one row per strategy, fastest first, with the
// speed-up of each over the best peer (every strategy but burst's own).
#pragma once

#include <vector>

#include "simulator/layer_simulation.hpp"

namespace burst::cli {

void print_simulation_table(const std::vector<sim::LayerSimulation>& results);

}  // namespace burst::cli
