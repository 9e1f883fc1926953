// Lowering speed at scale (hidden: run with `burst_attention_tests [.bench]`).
#include <catch2/catch.hpp>

#include <chrono>
#include <ctime>

#include "brute_force.hpp"

using namespace burst::sim;
using namespace burst::sim::testing;

TEST_CASE("lowering a 1M-token layer for 1024 GPUs (128 nodes x 8, double ring) takes under 0.5 s", "[.bench]") {
  // 32 heads x 128, causal, zigzag, Q-ring backward: R = 1024 ring ranks, R^2 = 1M blocks,
  // so about 1M computes and 1M hops forward, and 3M tasks backward.
  const World world{128, 8};
  const AttentionShape shape = mha(1 << 20, 32, 128);
  const AttentionStrategy s = strategy_preset("burst", shape, world);
  // CPU time (user + system, page faults included) is what the lowering costs; wall time on a
  // shared machine also counts other processes.
  const std::clock_t cpu_start = std::clock();
  const auto start = std::chrono::steady_clock::now();
  const LoweredAttention low = lower_attention(shape, Mask{}, s, world);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  WARN("lowered " << low.forward.size() << " forward + " << low.backward.size() << " backward tasks in " << cpu
                  << " s CPU, " << wall << " s wall");
  CHECK(count_tasks(low.forward, TaskKind::Compute) == 1024u * 1024u);
  CHECK(cpu < 0.5);
}

TEST_CASE("document and sliding masks at 1024 ranks: the pair table stays fast", "[.bench]") {
  // Document masks are counted block by block (not translation invariant). Striped blocks with
  // documents of 3000 tokens (not a multiple of the stride 1024) take the periodic path: one
  // period of 1024 / gcd(3000, 1024) = 128 documents per block, 128M in all (a few seconds);
  // every other case here is one or two documents per block.
  const World world{128, 8};
  const AttentionShape shape = mha(1 << 20, 32, 128);
  for (const Layout layout : {Layout::Zigzag, Layout::Striped}) {
    for (const Mask mask : {Mask{MaskKind::Document, 0, 4096}, Mask{MaskKind::Document, 0, 3000},
                            Mask{MaskKind::SlidingWindow, 4096, 0}}) {
      AttentionStrategy s = strategy_preset("burst", shape, world);
      s.layout = layout;
      const std::clock_t cpu_start = std::clock();
      const LoweredAttention low = lower_attention(shape, mask, s, world);
      const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
      WARN(to_string(layout) << " " << to_string(mask) << ": " << low.forward.size() + low.backward.size()
                             << " tasks in " << cpu << " s CPU");
      const bool long_period = layout == Layout::Striped && mask.kind == MaskKind::Document && mask.doc_len == 3000;
      CHECK(cpu < (long_period ? 8.0 : 1.0));
    }
  }
}
