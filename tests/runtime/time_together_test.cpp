// Calibration's timing of every rank at once (runtime/calibration/together.hpp): a measurement
// lasts until the slowest rank is done, on every rank, whenever each rank starts. On a machine
// whose ranks share cores, a rank the scheduler has not run yet leaves the first barrier late;
// timing from its own start alone let the ranks run one after another and each report a full
// core's speed.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>
#include <vector>

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

TEST_CASE("best of slowest: per measurement, the best round of its slowest rank") {
  constexpr int kRanks = 2;
  std::vector<double> got;
  const auto errors = test::on_every_rank(kRanks, [&](rt::Communicator& comm) {
    // Two measurements, two rounds: rank 1 is slower in round 0, rank 0 in round 1.
    const std::vector<double> mine =
        comm.rank() == 0 ? std::vector<double>{1, 5, 4, 2} : std::vector<double>{3, 6, 1, 1};
    const std::vector<double> best = rt::best_of_slowest(comm, mine, 2);
    if (comm.rank() == 0) got = best;
  });
  for (const auto& e : errors) CHECK(e.empty());
  CHECK(got == std::vector<double>{3, 2});  // min(max(1, 3), max(4, 1)); min(max(5, 6), max(2, 1))
}
