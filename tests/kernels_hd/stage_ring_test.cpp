// The Hopper forward's stage protocol (runtime/cuda/detail/stage_ring.hpp) against a model of
// mbarriers, under random interleavings of its producer and its consumer warps, step by step as
// flash_forward_sm90.cu takes them:
//   producer   for tile n: if StageRing::refill(n), wait "empty"[stage] on empty_parity(n);
//              then fill the stage with tile n (arrive on "full" with the bytes; TMA lands them)
//   consumer   wait "full"[stage(0)] on full_parity(0); read K of tile 0;
//              for n >= 1: wait "full"[stage(n)] on full_parity(n); read K of tile n and V of
//              tile n - 1; release tile n - 1 (arrive on "empty"[stage(n - 1)]);
//              at the end read V of the last tile
// An mbarrier here behaves as try_wait.parity does: a wait passes unless the phase in progress
// has the parity named, so a waiter two phases off would pass or block wrongly. Checked for every
// tile count up to 12 and 2-4 stages: every read finds the tile it wants in the stage, the
// producer refills a stage only after every warp has read its previous tile, and every schedule
// ends.
#include <catch2/catch.hpp>

#include <optional>
#include <random>
#include <vector>

#include "runtime/cuda/detail/stage_ring.hpp"

using namespace burst::rt::gpu;

namespace {

struct PhaseBarrier {
  int expected = 1;
  int arrived = 0;
  int completed = 0;  // phases completed
  void arrive() {
    if (++arrived == expected) {
      arrived = 0;
      ++completed;
    }
  }
  // mbarrier.try_wait.parity: the phase in progress has parity completed % 2; a wait on the
  // other parity passes (the phase of that parity has completed), a wait on this one does not.
  [[nodiscard]] bool passed(std::uint32_t parity) const { return static_cast<std::uint32_t>(completed & 1) != parity; }
};

template <int S>
void run_schedules(int tiles, int warps, std::mt19937& rng) {
  using Ring = StageRing<S>;
  for (int schedule = 0; schedule < 50; ++schedule) {
    std::vector<PhaseBarrier> full(S), empty(S);
    for (auto& e : empty) e.expected = warps;
    std::vector<int> stage_holds(S, -1);  // the tile in each stage
    int produced = 0;
    struct Warp {
      int next = 0;  // the tile whose "full" this warp waits for next; tiles: done
    };
    std::vector<Warp> consumers(static_cast<std::size_t>(warps));
    int steps = 0;
    const auto producer_step = [&]() -> bool {
      if (produced == tiles) return false;
      const int n = produced, s = Ring::stage(n);
      if (Ring::refill(n) && !empty[static_cast<std::size_t>(s)].passed(Ring::empty_parity(n))) return false;
      // The stage's readers are done with its previous tile: every warp has read it.
      for (const Warp& w : consumers) CHECK((!Ring::refill(n) || w.next > n - S + 1));
      stage_holds[static_cast<std::size_t>(s)] = n;  // TMA writes the stage
      full[static_cast<std::size_t>(s)].arrive();    // and its bytes complete the phase
      ++produced;
      return true;
    };
    const auto consumer_step = [&](Warp& w) -> bool {
      if (w.next > tiles) return false;
      if (w.next == tiles) {  // the last V
        if (tiles > 0) CHECK(stage_holds[static_cast<std::size_t>(Ring::stage(tiles - 1))] == tiles - 1);
        ++w.next;
        return true;
      }
      const int n = w.next, s = Ring::stage(n);
      if (!full[static_cast<std::size_t>(s)].passed(Ring::full_parity(n))) return false;
      CHECK(stage_holds[static_cast<std::size_t>(s)] == n);  // K of tile n
      if (n >= 1) {
        CHECK(stage_holds[static_cast<std::size_t>(Ring::stage(n - 1))] == n - 1);  // V of tile n - 1
        empty[static_cast<std::size_t>(Ring::stage(n - 1))].arrive();
      }
      ++w.next;
      return true;
    };
    for (;;) {
      std::vector<int> ready;  // -1: the producer; i: consumer warp i
      bool all_done = produced == tiles;
      for (const Warp& w : consumers) all_done = all_done && w.next > tiles;
      if (all_done) break;
      std::vector<int> order{-1};
      for (int i = 0; i < warps; ++i) order.push_back(i);
      std::shuffle(order.begin(), order.end(), rng);
      bool moved = false;
      for (const int who : order) {
        moved = who < 0 ? producer_step() : consumer_step(consumers[static_cast<std::size_t>(who)]);
        if (moved) break;
      }
      REQUIRE(moved);  // someone can always move: no deadlock
      REQUIRE(++steps < 10000);
    }
  }
}

}  // namespace

TEST_CASE("the Hopper forward's stages: every read finds its tile, no parity aliases, no deadlock", "[wgmma]") {
  std::mt19937 rng(29);
  for (int tiles = 0; tiles <= 12; ++tiles) {
    INFO(tiles << " tiles");
    run_schedules<2>(tiles, 8, rng);
    run_schedules<3>(tiles, 8, rng);
    run_schedules<4>(tiles, 3, rng);
  }
}
