// The CPU runtime's host memory policy (common/host_memory.hpp): once a process keeps
// its freed memory, a step's transient blocks are mapped on the first step only. The pattern is
// a ring step's: several blocks of 1-3 MiB allocated, written and freed together, again and
// again. With glibc's defaults, in a fresh process, every round faults every page in anew (the
// freed top of the heap goes back to the kernel): measured 3808 faults a round for these 15 MiB
// (3840 pages), and none after the second round with the policy.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "common/host_memory.hpp"

using namespace burst;

namespace {

// One round: 8 blocks of 1, 2 or 3 MiB, each written in full (value-initialised), then freed.
std::uint64_t faults_of_one_round() {
  const std::uint64_t before = host_page_faults();
  {
    std::vector<std::vector<float>> blocks;
    for (int b = 0; b < 8; ++b) blocks.emplace_back(static_cast<std::size_t>((1 << 20) / 4 * (1 + b % 3)));
  }
  return host_page_faults() - before;
}

}  // namespace

TEST_CASE("a process that keeps its freed host memory maps a step's transient blocks once", "[host_memory]") {
  const bool kept = keep_freed_host_memory();
  if constexpr (BURST_SANITIZER_ALLOCATOR != 0) {
    WARN("the sanitizers' allocator takes malloc's place: the policy " << (kept ? "was taken" : "was refused")
                                                                       << "; there are no glibc heap faults to count");
    return;
  }
  REQUIRE(kept);
  // The first rounds grow the heap to the rounds' peak (earlier tests in this process may have).
  const std::uint64_t first = faults_of_one_round() + faults_of_one_round();
  std::uint64_t later = 0;
  for (int round = 0; round < 4; ++round) later += faults_of_one_round();
  INFO("the first two rounds " << first << " faults, the next four " << later);
  constexpr std::uint64_t kPagesPerRound = 15 * (1 << 20) / 4096;
  CHECK(later < kPagesPerRound / 10);
}
