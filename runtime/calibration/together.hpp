// Timing that every rank of a job does at once, as the ranks of a run compute at once.
//
// On a machine whose cores are shared by all ranks, a kernel timed alone runs faster than the
// same kernel in a job: the other ranks take their share of cores, caches and memory
// bandwidth. So calibration times every measurement on all ranks together: a barrier lines
// the ranks up, each runs, a second barrier waits for the last, and the round counts as long
// as its slowest rank (a ring step ends when its slowest rank does). The second barrier is
// what makes "together" hold where ranks share cores: a rank the scheduler has not run yet
// leaves the first barrier late, so clocks that stopped at each rank's own end let the ranks
// run one after another and each report a whole core's speed (4 ranks on 2 cores measured
// 75 GFLOP/s a rank at small blocks, twice what the two cores give four ranks). Rounds repeat the whole list of
// measurements interleaved, and each measurement keeps its median round: a run reports its median step, and the
// calibration takes the same statistic of the same shared machine. The best round, kept before, was the one least
// disturbed by other jobs, which no run's median step is: on a 2-core machine whose speed moved within seconds,
// the README's local job measured 1.14-1.21x the prediction of best-round calibrations and 1.05-1.15x that of
// median-round ones (three interleaved runs each), and 1.00-1.22x in four more (docs/fidelity.md).
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "runtime/comm/communicator.hpp"

namespace burst::rt {

// Barrier, `run`, barrier: the seconds from this rank's start until every rank is done. Every
// rank calls it.
[[nodiscard]] double time_together(Communicator& comm, const std::function<void()>& run);

// `mine[round * per_round + i]` is this rank's time of measurement i in a round. Returns, on
// rank 0, for each i the median over rounds of the slowest rank's time (empty elsewhere).
// Every rank calls it with the same lengths.
[[nodiscard]] std::vector<double> median_of_slowest(Communicator& comm, std::span<const double> mine,
                                                    std::size_t per_round);

}  // namespace burst::rt
