#include "runtime/calibration/ping_pong.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "common/median.hpp"

namespace burst::rt {
namespace {

// `trips` round trips of `message` between a and b; returns each round trip's seconds on a.
std::vector<double> round_trips(Communicator& comm, int a, int b, RingLevel level, std::vector<float>& message,
                                int trips) {
  const bool first = comm.rank() == a;
  const int peer = first ? b : a;
  std::vector<double> seconds;
  for (int t = 0; t < trips; ++t) {
    const auto t0 = std::chrono::steady_clock::now();
    // Messages between one pair on one tag arrive in order (MPI's non-overtaking rule), so
    // every trip can use step 0.
    for (const bool sending : {first, !first}) {
      Request r = sending ? comm.isend(std::span<const float>(message), peer, Channel::Collective, 0, level)
                          : comm.irecv(std::span<float>(message), peer, Channel::Collective, 0, level);
      comm.wait(r);
    }
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return seconds;
}

}  // namespace

LinkSpeed link_speed(std::vector<double> small, std::span<const std::pair<std::size_t, double>> fastest_by_bytes) {
  LinkSpeed speed;
  speed.latency_s = median(std::move(small)) / 2;
  for (const auto& [bytes, round_trip] : fastest_by_bytes) {
    const double one_way = round_trip / 2;
    const double moving = std::max(one_way - speed.latency_s, one_way / 2);
    speed.bandwidth_Bps = std::max(speed.bandwidth_Bps, static_cast<double>(bytes) / moving);
  }
  return speed;
}

std::vector<LinkPair> link_pairs(int ranks, int per_node) {
  std::vector<LinkPair> pairs;
  if (per_node >= 2 && ranks >= 2) pairs.push_back({RingLevel::Intra, 0, 1});
  if (ranks > per_node) pairs.push_back({RingLevel::Inter, 0, per_node});
  return pairs;
}

LinkSpeed ping_pong(Communicator& comm, int a, int b, RingLevel level, const PingPongOptions& o) {
  comm.barrier();
  LinkSpeed speed;
  if (comm.rank() == a || comm.rank() == b) {
    std::vector<float> small(2);
    std::vector<double> trips = round_trips(comm, a, b, level, small, o.latency_round_trips);
    std::vector<std::pair<std::size_t, double>> fastest;
    for (const std::size_t bytes : o.bandwidth_bytes) {
      std::vector<float> large(bytes / sizeof(float));
      const std::vector<double> t = round_trips(comm, a, b, level, large, o.bandwidth_round_trips);
      fastest.emplace_back(bytes, *std::min_element(t.begin(), t.end()));
    }
    speed = link_speed(std::move(trips), fastest);
  }
  comm.barrier();
  return speed;
}

}  // namespace burst::rt
