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
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/wait_time.hpp"
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
    case Channel::DkvRing: return "dkv ring";
    case Channel::Ulysses: return "ulysses all-to-all";
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

std::string_view to_string(DType t) {
  switch (t) {
    case DType::F32: return "fp32";
    case DType::F64: return "fp64";
    case DType::BF16: return "bf16";
    case DType::I32: return "int32";
    case DType::I64: return "int64";
    case DType::U64: return "uint64";
    case DType::Bytes: return "bytes";
  }
  return "unknown dtype";
}

RingLevel parse_ring_level(std::string_view text, const std::string& where) {
  for (auto level : {RingLevel::Flat, RingLevel::Intra, RingLevel::Inter}) {
    if (text == to_string(level)) return level;
  }
  throw Error(Problem{where, fmt::format("unknown ring level '{}'", text), "flat, intra, inter",
                      "flat is the single ring; intra and inter are the inner and outer rings of a double ring"});
}

Request Communicator::isend(ConstBuffer data, int peer, Channel channel, int step, RingLevel level) {
  const Envelope e{Operation::Send, peer, channel, step, level, data.count, data.dtype};
  check_point_to_point(e);
  auto state = post_send(data, e);
  count(e);
  return Request(e, std::move(state));
}

Request Communicator::irecv(MutBuffer data, int peer, Channel channel, int step, RingLevel level) {
  const Envelope e{Operation::Recv, peer, channel, step, level, data.count, data.dtype};
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
  const auto deadline = Clock::now() + wait_duration(options_.timeout_s);
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
  const Operation op = late->envelope_.operation;
  if (op != Operation::Send && op != Operation::Recv) pending_collective_ = error.what();
  for (auto& r : requests) r.state_.reset();
  throw error;
}

void Communicator::barrier() {
  run_collective(Envelope{Operation::Barrier, -1, Channel::Collective, 0, RingLevel::Flat, 0, DType::Bytes},
                 post_barrier());
}

void Communicator::check_collective(const Envelope& e, DType out_dtype, std::size_t out_count, std::size_t expected,
                                    bool here) const {
  Problems problems;
  const std::string where = fmt::format("rank {}: {}", rank(), describe(e));
  const bool reduction = e.operation == Operation::Allreduce || e.operation == Operation::ReduceScatter;
  if (reduction && (e.dtype == DType::Bytes || (e.dtype == DType::BF16 && !reduces_bf16()))) {
    problems.add(where, fmt::format("cannot reduce {} elements on this backend", to_string(e.dtype)),
                 reduces_bf16() ? "fp32, fp64, bf16, int32, int64, uint64" : "fp32, fp64, int32, int64, uint64",
                 "reduce in fp32 and round afterwards");
  }
  if (here && out_dtype != e.dtype) {
    problems.add(where, fmt::format("output is {}, input {}", to_string(out_dtype), to_string(e.dtype)),
                 "the same dtype", "");
  }
  if (here && out_count != expected) {
    problems.add(where, fmt::format("output holds {} elements", out_count),
                 fmt::format("{} elements ({} ranks, {} each)", expected, size(), e.count),
                 "every rank contributes the same count");
  }
  problems.throw_if_any();
}

void Communicator::run_collective(const Envelope& e, std::unique_ptr<Request::State> state) {
  Request r(e, std::move(state));
  count(e);
  wait(r);
}

void Communicator::allreduce(MutBuffer data, ReduceOp op) {
  Envelope e{Operation::Allreduce, -1, Channel::Collective, 0, RingLevel::Flat, data.count, data.dtype, op};
  check_collective(e, data.dtype, data.count, data.count, true);
  run_collective(e, post_allreduce(data, e));
}

void Communicator::allgather(ConstBuffer mine, MutBuffer all) {
  Request r = iallgather(mine, all);
  wait(r);
}

Request Communicator::iallgather(ConstBuffer mine, MutBuffer all) {
  const Envelope e{Operation::Allgather, -1, Channel::Collective, 0, RingLevel::Flat, mine.count, mine.dtype};
  check_collective(e, all.dtype, all.count, mine.count * static_cast<std::size_t>(size()), true);
  Request r(e, post_allgather(mine, all, e));
  count(e);
  return r;
}

void Communicator::reduce_scatter(ConstBuffer all, MutBuffer mine, ReduceOp op) {
  Request r = ireduce_scatter(all, mine, op);
  wait(r);
}

Request Communicator::ireduce_scatter(ConstBuffer all, MutBuffer mine, ReduceOp op) {
  const Envelope e{Operation::ReduceScatter, -1, Channel::Collective, 0, RingLevel::Flat, mine.count, mine.dtype, op};
  check_collective(e, all.dtype, all.count, mine.count * static_cast<std::size_t>(size()), true);
  Request r(e, post_reduce_scatter(all, mine, e));
  count(e);
  return r;
}

void Communicator::gather_to_root(ConstBuffer mine, MutBuffer all_at_root) {
  const Envelope e{Operation::GatherToRoot, -1, Channel::Collective, 0, RingLevel::Flat, mine.count, mine.dtype};
  check_collective(e, all_at_root.dtype, all_at_root.count, mine.count * static_cast<std::size_t>(size()), rank() == 0);
  run_collective(e, post_gather(mine, all_at_root, e));
}

void Communicator::broadcast(MutBuffer data, int root) {
  const Envelope e{Operation::Broadcast, root, Channel::Collective, 0, RingLevel::Flat, data.count, data.dtype};
  if (root < 0 || root >= size()) {
    throw Error(Problem{fmt::format("rank {}: broadcast", rank()), fmt::format("root {} is not a rank", root),
                        fmt::format("0 .. {}", size() - 1), ""});
  }
  run_collective(e, post_broadcast(data, root, e));
}

void Communicator::all_to_all(ConstBuffer send, MutBuffer recv, std::span<const int> group, Channel channel, int step,
                              RingLevel level) {
  const auto n = group.size();
  const auto me = std::find(group.begin(), group.end(), rank());
  if (n == 0 || me == group.end() || send.dtype != recv.dtype || send.count != recv.count || send.count % n != 0) {
    throw Error(Problem{
        fmt::format("rank {}: all_to_all on the {}", rank(), to_string(channel)),
        fmt::format("group of {} ranks{}, send {} x {}, receive {} x {}", n,
                    me == group.end() ? " without this rank" : "", send.count, to_string(send.dtype), recv.count,
                    to_string(recv.dtype)),
        "a group holding this rank; send and receive of one dtype and count, a multiple of the group size", ""});
  }
  const std::size_t block = send.count / n, block_bytes = block * dtype_size(send.dtype);
  const auto* in = static_cast<const std::byte*>(send.data);
  auto* out = static_cast<std::byte*>(recv.data);
  const auto mine = static_cast<std::size_t>(me - group.begin());
  std::vector<Request> requests;
  requests.reserve(2 * n);
  for (std::size_t x = 1; x < n; ++x) {  // peers in a rotating order, as pairwise all-to-all does
    const std::size_t from = (mine + n - x) % n, to = (mine + x) % n;
    requests.push_back(
        irecv(MutBuffer(out + from * block_bytes, block, recv.dtype), group[from], channel, step, level));
    requests.push_back(isend(ConstBuffer(in + to * block_bytes, block, send.dtype), group[to], channel, step, level));
  }
  wait_all(requests);
}

void Communicator::count(const Envelope& e) {
  bytes_[static_cast<std::size_t>(e.channel) * kRingLevelCount + static_cast<std::size_t>(e.level)] += e.bytes();
}

std::uint64_t Communicator::bytes_sent(Channel channel, RingLevel level) const {
  return bytes_[static_cast<std::size_t>(channel) * kRingLevelCount + static_cast<std::size_t>(level)];
}

std::uint64_t Communicator::bytes_sent(RingLevel level) const {
  std::uint64_t sum = 0;
  for (int c = 0; c < kChannelCount; ++c) sum += bytes_sent(static_cast<Channel>(c), level);
  return sum;
}

std::uint64_t Communicator::bytes_sent(Channel channel) const {
  std::uint64_t sum = 0;
  for (int l = 0; l < kRingLevelCount; ++l) sum += bytes_sent(channel, static_cast<RingLevel>(l));
  return sum;
}

void Communicator::reset_counters() { bytes_ = {}; }

void Communicator::abort_all(int exit_code) const {
  abort_backend(exit_code);
  std::_Exit(exit_code);
}

void abort_job(const Communicator& comm, const std::string& message) {
  // A communicator's own errors already start with "rank R: " (comm_errors.hpp): not twice.
  const std::string rank = fmt::format("rank {}: ", comm.rank());
  std::fprintf(stderr, "%s%s\n", message.starts_with(rank) ? "" : rank.c_str(), message.c_str());
  std::fflush(stderr);
  comm.abort_all(1);
}

}  // namespace burst::rt
