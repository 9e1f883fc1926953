// What the simulator says a plan's attention sends on each ring level, per rank: the figure a
// run's measured bytes are set beside (`burst run --attention-only`, the precision tests).
//
// The plan is lowered as the simulator lowers a candidate (simulator/attention/lowering.hpp)
// on the world its rings describe: Ulysses groups of U consecutive ranks, inner rings of
// `inner` groups inside a node, so a node holds inner x U ranks. A transfer's level is the
// runtime's: flat on a flat ring; on a double ring intra when both ends share a node, else
// inter. The Ulysses all-to-all is left out: the runtime counts it apart.
#pragma once

#include <array>
#include <cstdint>

#include "plan/plan.hpp"

namespace burst::planner {

struct AttentionDims {
  std::int64_t seq = 0;
  int heads = 0, kv_heads = 0, head_dim = 0;
};

// [phase: forward, backward][level: flat, intra, inter] bytes per rank, mean over ranks.
using RingTraffic = std::array<std::array<double, 3>, 2>;

// The plan's strategy, mask and precision (job.dtype, dq_bytes, dkv_bytes) over `dims` (the
// plan's own, or a dry run's). Throws burst::Error when the simulator cannot lower the plan.
// One replica's layer on one sequence: what an attention run measures on each rank.
[[nodiscard]] RingTraffic simulated_ring_traffic(const plan::Plan& plan, const AttentionDims& dims);

}  // namespace burst::planner
