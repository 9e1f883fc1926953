// The memory pre-flight: its lower bound item by item (a GPU run's split between the GPU and the
// host), its refusal naming the items and the source of the limit, and what this machine
// reports as available.
#include <catch2/catch.hpp>

#include <cstdint>

#include "common/saturating.hpp"
#include "runtime/training/detail/memory_preflight.hpp"
#include "tests/support/error_text.hpp"
#include "tests/support/ring_plan.hpp"

using namespace burst;

TEST_CASE("the least footprint counts kept layer inputs, one layer's working set and the model state", "[preflight]") {
  plan::Plan p = test::training_plan(4, 4, Layout::Contiguous, BackwardMode::KvRing, CheckpointPolicy::Full, 0, 1);
  const ModelSpec& m = p.job.model;  // 2 layers, hidden 32, FFN 48, 2 KV heads of 8
  const std::int64_t c = 1000;
  p.strategy.zero.stage = 0;
  const auto need = rt::minimum_training_memory(p, c, 4);
  REQUIRE(need.size() == 3);
  CHECK(need[0].bytes == 4u * 2 * 1000 * 32);                                  // L c hidden
  CHECK(need[1].bytes == 4u * 1000 * std::max(3 * 32 + 2 * 16, 32 + 2 * 48));  // the larger stage
  CHECK(need[2].bytes == static_cast<std::uint64_t>(4 * 2 * m.total_params()));
  p.strategy.zero.stage = 3;  // parameters and gradients sharded over the 4 ranks
  CHECK(rt::minimum_training_memory(p, c, 4)[2].bytes == static_cast<std::uint64_t>(4 * 2 * m.total_params() / 4));
}

TEST_CASE("a plan beyond what the rank can have is refused naming every item and the limit", "[preflight]") {
  const std::vector<rt::MemoryNeed> need{{"layer inputs", 3ull << 30}, {"state", 1ull << 30}};
  CHECK_NOTHROW(rt::require_memory(need, {5ull << 30, "test"}));
  const std::string text = test::error_text([&] {
    rt::require_memory(need, {2ull << 30, "MemAvailable 8 GiB shared by 4 rank(s)"});
  });
  CHECK_THAT(text, Catch::Contains("plan:/job/seq_len: this rank needs at least 4.00 GiB"));
  CHECK_THAT(text, Catch::Contains("layer inputs 3.00 GiB, state 1.00 GiB"));
  CHECK_THAT(text, Catch::Contains("can have 2.00 GiB (MemAvailable 8 GiB shared by 4 rank(s))"));
}

TEST_CASE("this machine has some memory available, shared by the ranks on the node", "[preflight]") {
  const rt::MemoryAvailable one = rt::memory_available(1);
  const rt::MemoryAvailable four = rt::memory_available(4);
  CHECK(one.bytes > 0);
  CHECK(four.bytes <= one.bytes);
  CHECK_FALSE(one.source.empty());
}

TEST_CASE("a GPU run's activations are checked against the GPU in their dtype there, its model state against the host",
          "[preflight]") {
  plan::Plan p = test::training_plan(4, 4, Layout::Contiguous, BackwardMode::KvRing, CheckpointPolicy::Full, 0, 1);
  p.strategy.zero.stage = 0;
  const auto cpu = rt::minimum_training_memory(p, 1000, 4);
  const auto gpu = rt::minimum_training_memory(p, 1000, 4, 2);  // bf16 activations on the device
  REQUIRE(gpu.size() == 3);
  CHECK((gpu[0].on_device && gpu[1].on_device && !gpu[2].on_device));
  CHECK(gpu[0].bytes == cpu[0].bytes / 2);
  CHECK(gpu[1].bytes == cpu[1].bytes / 2);
  CHECK(gpu[2].bytes == cpu[2].bytes);
  CHECK_FALSE((cpu[0].on_device || cpu[1].on_device || cpu[2].on_device));
  // The state on the GPU too (a plan that does not offload): bf16 parameters, fp32 gradients, and
  // the fp32 master weights, m and v, at ZeRO 0 all whole: 2 + 4 + 12 bytes a parameter.
  const auto resident = rt::minimum_training_memory(p, 1000, 4, 2, true);
  REQUIRE(resident.size() == 3);
  CHECK(resident[2].on_device);
  CHECK(resident[2].bytes == static_cast<std::uint64_t>(18 * p.job.model.total_params()));

  const std::vector<rt::MemoryNeed> need{{"layer inputs", 3ull << 30, true}, {"state", 1ull << 30, false}};
  CHECK_NOTHROW(rt::require_memory(need, {2ull << 30, "host"}, rt::MemoryAvailable{4ull << 30, "gpu"}));
  CHECK_NOTHROW(rt::require_memory(need, {2ull << 30, "host"}));  // no device budget known: the host's items only
  const std::string text = test::error_text([&] {
    rt::require_memory(need, {2ull << 30, "host"}, rt::MemoryAvailable{1ull << 30, "cudaMemGetInfo: ..."});
  });
  CHECK_THAT(text, Catch::Contains("this rank needs at least 3.00 GiB of GPU memory (layer inputs 3.00 GiB) but can "
                                   "have 1.00 GiB (cudaMemGetInfo: ...)"));
  CHECK_THAT(test::error_text([&] {
               rt::require_memory(need, {512ull << 20, "MemAvailable"});
             }),
             Catch::Contains("needs at least 1.00 GiB (state 1.00 GiB) but can have 0.50 GiB (MemAvailable)"));
}

TEST_CASE("a GPU's share is its free memory divided among the ranks driving it", "[preflight]") {
  const rt::DeviceMemoryUse use{0, 16ull << 30, 80ull << 30};  // 16 of 80 GiB in use
  const rt::MemoryAvailable alone = rt::device_memory_available(use, 1);
  CHECK(alone.bytes == 64ull << 30);
  CHECK(alone.source == "cudaMemGetInfo: 64.00 GiB free of 80.00 GiB on this GPU, shared by 1 rank(s)");
  CHECK(rt::device_memory_available(use, 4).bytes == 16ull << 30);  // a 4-rank loopback job on one GPU
  CHECK(rt::device_memory_available(use, 0).bytes == 64ull << 30);  // no ranks counted: the whole GPU
}

TEST_CASE("a sequence of 2^53 tokens or more is refused as too large, never passed by an estimate that wrapped",
          "[preflight]") {
  plan::Plan p = test::training_plan(1, 1, Layout::Contiguous, BackwardMode::KvRing, CheckpointPolicy::Full, 0, 1);
  ModelSpec& m = p.job.model;  // tiny-mha's shape: its 2^53-token estimate is past 2^64 bytes
  m.hidden = 512;
  m.ffn = 1376;
  m.heads = 4;
  m.kv_heads = 4;
  m.head_dim = 128;
  for (const std::int64_t tokens : {std::int64_t{1} << 53, std::int64_t{1} << 60, INT64_MAX}) {
    INFO(tokens << " tokens");
    const auto need = rt::minimum_training_memory(p, tokens, 1);
    CHECK(need[0].bytes == kSizeCeiling);
    const std::string text = test::error_text([&] { rt::require_memory(need, {1ull << 40, "a 1 TiB machine"}); });
    CHECK_THAT(text, Catch::Contains("plan:/job/seq_len: this rank needs more than 8 EiB, too large to count "
                                     "(layer inputs kept (every policy) more than 8 EiB, "));
    CHECK_THROWS(rt::require_memory(need, {UINT64_MAX, "no limit found"}));  // no machine has the ceiling
    CHECK_THROWS(rt::require_memory(rt::minimum_training_memory(p, tokens, 1, 2, true), {1ull << 40, "host"},
                                    rt::MemoryAvailable{1ull << 40, "gpu"}));
  }
}
