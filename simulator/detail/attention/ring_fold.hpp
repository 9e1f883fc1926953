// Folding a ring onto one window: when the ranks of a long ring need not each be simulated.
//
// In a ring of R ranks every rank computes at every one of R steps, so a layer is R^2 tasks: 3M
// for 1024 GPUs, 270M for 16,384. But a ring placed on identical nodes repeats itself. Shift
// every rank by the ring ranks of a whole node (a window) and the schedule maps onto itself:
// the same hops between the same kinds of link, each window receiving from the previous one as
// the previous one receives from the one before. Where, in addition, every window does the same
// work at every step (the mask's allowed pairs do not depend on the window), every window runs
// the same timeline, and simulating one window, with the transfers into it sent from the
// previous window's GPUs as if that window were this one (ring_pass.hpp, RingWindow), gives the
// whole ring's times. That is O(R) tasks instead of O(R^2).
//
// When the fold applies (fold_window):
//   - the ring has more than one window: a window is the ring ranks of one node (the inner
//     ring's, if that spans more), and the ring a multiple of it;
//   - every block visits every rank (full journeys: full masks, and causal masks under the
//     zigzag or striped layout), so no hop is skipped and accumulators follow their blocks;
//   - the topology makes the windows alike: each transfer's route, shifted by a window, crosses
//     links of the same kind, speed and sharing, and no link two windows share could bind them
//     (copies.hpp's test; layer_simulation.cpp runs it, since the lowering sees no topology).
// Exactness: a causal mask gives the ranks of different windows different work at a step (a
// zigzag rank meets blocks before it as c x c/2 kernels and after it as c/2 x c). Then the fold
// is an approximation: the window holding the busiest rank (by the compute cost model) is
// simulated, its predecessor assumed to keep its pace. tests/simulation/ring_fold_test.cpp measures how close it stays.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "simulator/attention/ring.hpp"
#include "simulator/detail/attention/ring_pass.hpp"

namespace burst::sim {

struct FoldChoice {
  // Per pass, the window it folds onto (each pass's busiest, where windows differ); empty: no fold.
  std::vector<RingWindow> windows;
  bool exact = true;  // every window does the same work at every step
  // Not exact: per pass, max / mean over every ring rank of its kernels' seconds (the window's
  // ranks alone would not show it); empty when exact.
  std::vector<double> imbalance;
  std::string why_not;  // no fold of a ring longer than one window: why
};

// The window to fold the ring onto, or why none: `table` is the passes' pair table, `world` the
// ring's world (nodes x GPUs per node). Where windows differ in work, each pass folds onto the
// window holding its rank whose kernels take longest by `block_seconds` (FLOPs when empty).
[[nodiscard]] FoldChoice fold_window(const RingGeometry& geometry, const PairTable& table, const World& world,
                                     std::span<const RingPass* const> passes,
                                     const std::function<double(const Task&)>& block_seconds);

}  // namespace burst::sim
