// Calibration's timing of every rank at once (runtime/calibration/together.hpp): a measurement
// lasts until the slowest rank is done, on every rank, whenever each rank starts. On a machine
// whose ranks share cores, a rank the scheduler has not run yet leaves the first barrier late;
// timing from its own start alone let the ranks run one after another and each report a full
// core's speed. And the attention probes run as ring steps (kernel_speed.hpp): every repetition
// moves a K,V block around every rank, so a kernel is priced as a ring pass runs it.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "runtime/calibration/kernel_speed.hpp"
#include "runtime/calibration/together.hpp"
#include "tests/support/loopback_job.hpp"

using namespace burst;

TEST_CASE("a measurement taken together lasts until the slowest rank is done, on every rank") {
  constexpr int kRanks = 3;
  constexpr auto kSlow = std::chrono::milliseconds(60);
  std::vector<double> seconds(kRanks, 0);
  const auto errors = test::on_every_rank(kRanks, [&](rt::Communicator& comm) {
    seconds[static_cast<std::size_t>(comm.rank())] = rt::time_together(comm, [&] {
      if (comm.rank() == kRanks - 1) std::this_thread::sleep_for(kSlow);  // the rank run last
    });
  });
  for (const auto& e : errors) CHECK(e.empty());
  // Every rank, the ones done at once too (one barrier would give them about 0), at least half
  // the slow rank's time: scheduling delays on a loaded machine eat into the rest.
  const double slow_s = std::chrono::duration<double>(kSlow).count();
  for (const double s : seconds) CHECK(s >= 0.5 * slow_s);
}

TEST_CASE("median of slowest: per measurement, the median round of its slowest rank") {
  constexpr int kRanks = 2;
  std::vector<double> got;
  const auto errors = test::on_every_rank(kRanks, [&](rt::Communicator& comm) {
    // Two measurements, three rounds: the slowest rank changes from round to round.
    const std::vector<double> mine =
        comm.rank() == 0 ? std::vector<double>{1, 5, 4, 2, 9, 3} : std::vector<double>{3, 6, 1, 1, 2, 8};
    const std::vector<double> typical = rt::median_of_slowest(comm, mine, 2);
    if (comm.rank() == 0) got = typical;
  });
  for (const auto& e : errors) CHECK(e.empty());
  // Slowest per round: measurement 0 {3, 4, 9}, measurement 1 {6, 2, 8}; their medians.
  CHECK(got == std::vector<double>{4, 6});
}

TEST_CASE("the attention probes run as ring steps around every rank, the GEMM probes alone") {
  constexpr int kRanks = 3;
  rt::KernelSpeedOptions o;
  o.blocks = {64};
  o.heads = 2;
  o.head_dim = 64;
  o.rounds = 2;
  o.min_flops_per_run = 0;  // one call a probe
  std::vector<rt::KernelSpeed> speeds;
  std::vector<std::uint64_t> ring_bytes(kRanks, 0);
  const auto errors = test::on_every_rank(kRanks, [&](rt::Communicator& comm) {
    comm.reset_counters();
    std::vector<rt::KernelSpeed> mine = rt::measure_kernel_speeds(comm, o);
    const auto rank = static_cast<std::size_t>(comm.rank());
    ring_bytes[rank] = comm.bytes_sent(rt::Channel::KvRing);
    if (comm.rank() == 0) speeds = std::move(mine);
  });
  for (const auto& e : errors) CHECK(e.empty());
  // Forward and backward, causal and full, each round one ring step: its block's K and V in
  // bf16 (2 x 64 tokens x 2 heads x 64 x 2 bytes) to the next rank.
  const std::uint64_t block_bytes = 2 * 64 * 2 * 64 * 2;
  for (int r = 0; r < kRanks; ++r) CHECK(ring_bytes[static_cast<std::size_t>(r)] == 4 * 2 * block_bytes);
  REQUIRE(speeds.size() == 5u);  // 4 attention, 1 GEMM
  for (const rt::KernelSpeed& s : speeds) {
    INFO(s.kernel << " " << s.mask);
    CHECK(s.seconds > 0);
    CHECK(s.flops > 0);
  }
}
