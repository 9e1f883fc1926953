// The Hopper forward's K, V stages as arithmetic (host and device): a producer fills stage after
// stage by TMA and consumers release them, each stage guarded by two mbarriers, "full" (the
// fill landed) and "empty" (every consumer warp, or in the dK, dV pass every consumer thread, is
// done with it: hopper_pipeline.cuh). An mbarrier completes phase
// after phase, and a wait names the parity of the phase it waits for, so the arithmetic must
// never let a waiter fall two phases behind (the parity would alias):
//   tile n lives in stage n % S and is that stage's (n / S)-th fill: consumers wait on "full"
//   with parity (n / S) % 2;
//   the producer refills a stage for tile n >= S once tile n - S, its previous use, is released:
//   the (n / S - 1)-th phase of "empty", parity (n / S - 1) % 2. Tiles 0 .. S - 1 need no wait.
// tests/kernels_hd/stage_ring_test.cpp runs this protocol against a model of mbarriers under
// random interleavings of a producer and the consumer warps: every read sees the tile it wants,
// no stage is refilled while read, no parity aliases, and every schedule finishes.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"

namespace burst::rt::gpu {

template <int kStages>
struct StageRing {
  static_assert(kStages >= 2);
  BURST_HOST_DEVICE static constexpr int stage(int n) { return n % kStages; }
  BURST_HOST_DEVICE static constexpr std::uint32_t full_parity(int n) {
    return static_cast<std::uint32_t>((n / kStages) & 1);
  }
  BURST_HOST_DEVICE static constexpr bool refill(int n) { return n >= kStages; }
  BURST_HOST_DEVICE static constexpr std::uint32_t empty_parity(int n) {
    return static_cast<std::uint32_t>((n / kStages - 1) & 1);
  }
};

}  // namespace burst::rt::gpu
