// The backend-neutral half of every communicator: argument checks, byte counters, and the
// wait loop with its timeout.
//
// Why a polling loop: MPI_Wait (like cudaStreamSynchronize) blocks until the operation
// completes, which is forever if the peer died or never posts the matching call; MPI offers no
// wait with a timeout. So a wait tests the request (MPI_Test drives MPI's progress engine as
// MPI_Wait would) and, while it is incomplete, yields the core, first briefly and then in
// sleeps that double from 10 us up to 1 ms, until the deadline. The sleeps matter here: eight
// ranks on two cores would otherwise spin against the very ranks they wait for; 1 ms of added
// latency at most is small against a ring step's compute.
#include "runtime/comm/communicator.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/comm/comm_errors.hpp"

namespace burst::rt {
namespace {

using Clock = std::chrono::steady_clock;

// Yields for the first polls, then sleeps 10 us, 20 us, ... up to 1 ms between polls.
class Backoff {
 public:
  void pause() {
    if (polls_++ < kYieldPolls) {
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(sleep_);
    sleep_ = std::min(sleep_ * 2, kMaxSleep);
  }

 private:
  static constexpr int kYieldPolls = 64;
  static constexpr std::chrono::microseconds kMaxSleep{1000};
  int polls_ = 0;
  std::chrono::microseconds sleep_{10};
};

}  // namespace

std::string_view to_string(Channel channel) {
  switch (channel) {
    case Channel::KvRing: return "kv ring";
    case Channel::QRing: return "q ring";
    case Channel::DqRing: return "dq ring";
    case Channel::Collective: return "collective channel";
  }
  return "unknown channel";
}

std::string_view to_string(RingLevel level) {
  switch (level) {
    case RingLevel::Flat: return "flat";
    case RingLevel::Intra: return "intra";
    case RingLevel::Inter: return "inter";
  }
  return "unknown";
}

RingLevel parse_ring_level(std::string_view text, const std::string& where) {
  for (auto level : {RingLevel::Flat, RingLevel::Intra, RingLevel::Inter}) {
    if (text == to_string(level)) return level;
  }
  throw Error(Problem{where, fmt::format("unknown ring level '{}'", text), "flat, intra, inter",
                      "flat is the single ring; intra and inter are the inner and outer rings of a double ring"});
}

Request Communicator::isend(std::span<const float> data, int peer, Channel channel, int step, RingLevel level) {
  const Envelope e{Operation::Send, peer, channel, step, level, data.size()};
  check_point_to_point(e);
  auto state = post_send(data, e);
  count(e);
  return Request(e, std::move(state));
}

Request Communicator::irecv(std::span<float> data, int peer, Channel channel, int step, RingLevel level) {
  const Envelope e{Operation::Recv, peer, channel, step, level, data.size()};
  check_point_to_point(e);
  return Request(e, post_recv(data, e));
}

void Communicator::check_point_to_point(const Envelope& e) const {
  Problems problems;
  const std::string where = fmt::format("rank {}: {}", rank(), e.operation == Operation::Send ? "isend" : "irecv");
  if (e.peer < 0 || e.peer >= size()) {
    problems.add(where, fmt::format("peer {} is not a rank of this communicator", e.peer),
                 fmt::format("0 to {}", size() - 1));
  }
  if (e.step < 0) problems.add(where, fmt::format("step {} is negative", e.step), "steps >= 0");
  problems.throw_if_any();
}

void Communicator::wait(Request& request) { wait_all(std::span<Request>(&request, 1)); }

void Communicator::wait_all(std::span<Request> requests) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(options_.timeout_s);
  Backoff backoff;
  for (;;) {
    bool any_pending = false;
    for (auto& r : requests) {
      if (!r.pending()) continue;
      bool done = true;
      try {
        done = test(*r.state_, r.envelope_);
      } catch (...) {
        r.state_.reset();
        throw;
      }
      if (done) {
        r.state_.reset();
      } else {
        any_pending = true;
      }
    }
    if (!any_pending) return;
    if (Clock::now() >= deadline) break;
    backoff.pause();
  }
  // Report the first late request; destroying the states cancels every late one.
  const auto late = std::find_if(requests.begin(), requests.end(), [](const Request& r) { return r.pending(); });
  const Error error = timeout_error(rank(), late->envelope_, options_.timeout_s);
  for (auto& r : requests) r.state_.reset();
  throw error;
}

void Communicator::barrier() {
  Request r(Envelope{Operation::Barrier, -1, Channel::Collective, 0, RingLevel::Flat, 0}, post_barrier());
  wait(r);
}

void Communicator::allreduce_sum(std::span<float> data) {
  const Envelope e{Operation::AllreduceSum, -1, Channel::Collective, 0, RingLevel::Flat, data.size()};
  Request r(e, post_allreduce_sum(data));
  count(e);
  wait(r);
}

void Communicator::gather_to_root(std::span<const float> mine, std::span<float> all_at_root) {
  const Envelope e{Operation::GatherToRoot, -1, Channel::Collective, 0, RingLevel::Flat, mine.size()};
  const std::size_t expected = mine.size() * static_cast<std::size_t>(size());
  if (rank() == 0 && all_at_root.size() != expected) {
    throw Error(Problem{"rank 0: gather_to_root", fmt::format("all_at_root holds {} floats", all_at_root.size()),
                        fmt::format("{} floats: {} ranks x {}", expected, size(), mine.size()),
                        "every rank contributes the same number of floats"});
  }
  Request r(e, post_gather(mine, all_at_root));
  count(e);
  wait(r);
}

void Communicator::count(const Envelope& e) {
  const auto bytes = static_cast<std::uint64_t>(e.count * sizeof(float));
  bytes_by_level_[static_cast<std::size_t>(e.level)] += bytes;
  bytes_by_channel_[static_cast<std::size_t>(e.channel)] += bytes;
}

std::uint64_t Communicator::bytes_sent(RingLevel level) const { return bytes_by_level_[static_cast<std::size_t>(level)]; }

std::uint64_t Communicator::bytes_sent(Channel channel) const {
  return bytes_by_channel_[static_cast<std::size_t>(channel)];
}

void Communicator::reset_counters() {
  bytes_by_level_ = {};
  bytes_by_channel_ = {};
}

void Communicator::abort_all(int exit_code) const {
  abort_backend(exit_code);
  std::_Exit(exit_code);
}

void abort_job(const Communicator& comm, const std::string& message) {
  std::fprintf(stderr, "rank %d: %s\n", comm.rank(), message.c_str());
  std::fflush(stderr);
  comm.abort_all(1);
}

}  // namespace burst::rt
