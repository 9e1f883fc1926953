// Point-to-point latency and bandwidth between two ranks, through the runtime's Communicator
// (so the figures include what a ring step pays: tag matching, the polling wait of
// communicator.cpp, MPI's shared-memory or TCP transport), while every other rank waits at a
// barrier.
//
// Ping-pong: rank a sends n bytes to b, b sends them back; a round trip is two one-way trips.
//   latency   = median round trip of a small message (8 bytes) / 2
//   bandwidth = bytes / (one-way time of a large message - latency), best over the sizes
// The latency is removed from the large-message time because the cost models charge it
// separately: a transfer costs latency + bytes / bandwidth. link_speed() is that arithmetic,
// shared with the GPU's NCCL ping-pong (runtime/cuda/nccl_ping_pong.hpp).
//
// Which pairs are measured, per ring level, for N ranks in nodes of K (rank r in node r / K):
//   intra  ranks 0 and 1 (the same node), when K >= 2
//   inter  ranks 0 and K (the first rank of the next node), when N > K
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "runtime/comm/communicator.hpp"

namespace burst::rt {

struct PingPongOptions {
  int latency_round_trips = 200;
  std::vector<std::size_t> bandwidth_bytes = {std::size_t{4} << 20, std::size_t{16} << 20};
  int bandwidth_round_trips = 5;  // per size
};

struct LinkSpeed {
  double latency_s = 0;
  double bandwidth_Bps = 0;
};

// The figures of round trips: `small` (seconds, a few bytes each) and, per message size, the
// fastest round trip of that size.
[[nodiscard]] LinkSpeed link_speed(std::vector<double> small,
                                   std::span<const std::pair<std::size_t, double>> fastest_by_bytes);

struct LinkPair {
  RingLevel level = RingLevel::Intra;
  int a = 0, b = 0;
};
// The pairs to measure for `ranks` ranks in nodes of `per_node` (above), intra first.
[[nodiscard]] std::vector<LinkPair> link_pairs(int ranks, int per_node);

// Every rank calls it; a != b. The result is meaningful on rank a only.
[[nodiscard]] LinkSpeed ping_pong(Communicator& comm, int a, int b, RingLevel level, const PingPongOptions& options);

}  // namespace burst::rt
