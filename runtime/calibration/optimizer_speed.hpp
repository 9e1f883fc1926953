// How fast one of this machine's ranks takes an optimizer step, all ranks at once: the training
// step's AdamW on the CPU backend (the gradients' share of the global norm, squared_norm, then
// adamw_update over fp32 master weights, gradients and moments: runtime/training/adamw.hpp), on
// a shard of `params` parameters, as each rank updates its ZeRO shard at the end of a step. The
// cost model prices a CPU rank's optimizer step from it (simulator/training/optimizer_model.cpp);
// without it, it would take a GPU node's host CPU-Adam, shared by the node's GPUs, which on this
// kind of machine is some thirty times too fast (docs/fidelity.md, "The local machine").
#pragma once

#include <cstdint>

#include "runtime/comm/communicator.hpp"

namespace burst::rt {

struct OptimizerSpeedOptions {
  std::int64_t params = std::int64_t{1} << 21;
  int rounds = 3;
};

// Parameters a second one rank updates, the median round of the slowest rank (together.hpp).
// Every rank calls it; the result is meaningful on rank 0 (0 elsewhere).
[[nodiscard]] double measure_optimizer_speed(Communicator& comm, const OptimizerSpeedOptions& options);

}  // namespace burst::rt
