// Collectives over a subgroup of the parent's ranks, built from the parent's point-to-point
// messages (subgroup_communicator.hpp says why and what they cost).
//
// Every phase posts its receives, then its sends, then waits for all of them on the parent: no
// member waits on a send before its own receives are posted, so no order of arrival deadlocks,
// and the parent's timeout bounds the phase.
#include "runtime/comm/subgroup_communicator.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "runtime/comm/comm_errors.hpp"
#include "runtime/comm/detail/reduce_in_order.hpp"
#include "runtime/comm/detail/tag.hpp"

namespace burst::rt {
namespace {

// Steps 0 .. kSubgroupSteps - 1: every tag within 32767, the least MPI_TAG_UB MPI allows.
constexpr std::uint64_t kSubgroupSteps = static_cast<std::uint64_t>(max_step_for_tag_ub(32767)) + 1;

std::string member_list(const std::vector<int>& members) { return fmt::format("{{{}}}", fmt::join(members, ", ")); }

// `total` elements in blocks of `per` (the last ones shorter or empty): block j is elements
// [first(j), first(j) + length(j)).
struct Blocks {
  std::size_t total = 0, per = 0;
  [[nodiscard]] std::size_t first(int j) const { return std::min(static_cast<std::size_t>(j) * per, total); }
  [[nodiscard]] std::size_t length(int j) const { return std::min(per, total - first(j)); }
};

const std::byte* bytes_of(const void* p) { return static_cast<const std::byte*>(p); }
std::byte* bytes_of(void* p) { return static_cast<std::byte*>(p); }

}  // namespace

std::vector<int> checked_members(const Communicator& parent, std::vector<int> members) {
  Problems problems;
  const std::string where = fmt::format("rank {}: subgroup of ranks {}", parent.rank(), member_list(members));
  if (members.empty()) {
    problems.add(where, "no members", "parent ranks in increasing order, this rank among them",
                 "each rank makes the communicator of the group it belongs to");
  }
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (members[i] < 0 || members[i] >= parent.size()) {
      problems.add(where, fmt::format("{} is not a rank of the parent", members[i]),
                   fmt::format("0 to {}", parent.size() - 1));
    }
    if (i > 0 && members[i] <= members[i - 1]) {
      problems.add(where, fmt::format("rank {} follows rank {}", members[i], members[i - 1]),
                   "increasing ranks, each once", "the same sorted list on every member");
    }
  }
  if (!members.empty() && std::find(members.begin(), members.end(), parent.rank()) == members.end()) {
    problems.add(where, fmt::format("this rank ({}) is not a member", parent.rank()), "a list holding this rank",
                 "each rank makes the communicator of the group it belongs to");
  }
  problems.throw_if_any();
  return members;
}

SubgroupCommunicator::SubgroupCommunicator(Communicator& parent, std::vector<int> members)
    : Communicator(parent.options()), parent_(parent), members_(checked_members(parent, std::move(members))) {
  rank_ = static_cast<int>(std::find(members_.begin(), members_.end(), parent_.rank()) - members_.begin());
}

Envelope SubgroupCommunicator::on_parent(const Envelope& e) const {
  Envelope translated = e;
  if (e.operation == Operation::Send || e.operation == Operation::Recv) translated.peer = parent_rank(e.peer);
  return translated;
}

std::unique_ptr<Request::State> SubgroupCommunicator::post_send(ConstBuffer data, const Envelope& e) {
  wire_bytes_ += e.bytes();
  return parent_.post_send(data, on_parent(e));
}

std::unique_ptr<Request::State> SubgroupCommunicator::post_recv(MutBuffer data, const Envelope& e) {
  return parent_.post_recv(data, on_parent(e));
}

bool SubgroupCommunicator::test(Request::State& state, const Envelope& e) { return parent_.test(state, on_parent(e)); }

void SubgroupCommunicator::abort_backend(int exit_code) const { parent_.abort_all(exit_code); }

int SubgroupCommunicator::next_step() { return static_cast<int>(phases_++ % kSubgroupSteps); }

Request SubgroupCommunicator::receive_from(int member, MutBuffer data, int step) {
  const Envelope e{Operation::Recv, parent_rank(member), Channel::Collective, step,
                   RingLevel::Flat, data.count,          data.dtype};
  return {e, parent_.post_recv(data, e)};
}

Request SubgroupCommunicator::send_to(int member, ConstBuffer data, int step) {
  const Envelope e{Operation::Send, parent_rank(member), Channel::Collective, step,
                   RingLevel::Flat, data.count,          data.dtype};
  wire_bytes_ += e.bytes();
  return {e, parent_.post_send(data, e)};
}

void SubgroupCommunicator::complete(std::vector<Request>& requests, const Envelope& call) {
  try {
    parent_.wait_all(requests);
  } catch (const Error& error) {
    std::vector<Problem> problems{
        Problem{fmt::format("rank {} (rank {} of the parent)", rank_, parent_.rank()),
                fmt::format("{} over the subgroup of ranks {} did not complete", describe(call), member_list(members_)),
                "", "every member calls the subgroup's collectives in the same order"}};
    problems.insert(problems.end(), error.problems().begin(), error.problems().end());
    throw Error(std::move(problems));
  }
}

void SubgroupCommunicator::reduce_to_owners(ConstBuffer input, std::size_t per, void* out, ReduceOp op,
                                            const Envelope& call) {
  const int n = size(), step = next_step();
  const Blocks blocks{input.count, per};
  const std::size_t element = dtype_size(input.dtype), length = blocks.length(rank_);
  const std::byte* in = bytes_of(input.data);
  std::vector<std::vector<std::byte>> received(static_cast<std::size_t>(n));
  std::vector<Request> requests;
  requests.reserve(2 * static_cast<std::size_t>(n));
  for (int x = 1; x < n; ++x) {  // peers in a rotating order, so no member is everyone's first
    const int from = (rank_ + n - x) % n;
    auto& block = received[static_cast<std::size_t>(from)];
    block.resize(length * element);
    requests.push_back(receive_from(from, MutBuffer(block.data(), length, input.dtype), step));
  }
  for (int x = 1; x < n; ++x) {
    const int to = (rank_ + x) % n;
    requests.push_back(send_to(to, ConstBuffer(in + blocks.first(to) * element, blocks.length(to), input.dtype), step));
  }
  complete(requests, call);
  // Member order 0 .. n-1, this member's own block in its place: the same bits on every member.
  const auto block_of = [&](int m) {
    return m == rank_ ? in + blocks.first(rank_) * element : received[static_cast<std::size_t>(m)].data();
  };
  std::vector<const std::byte*> ordered;
  for (int m = 0; m < n; ++m) ordered.push_back(block_of(m));
  detail::reduce_in_order(input.dtype, op, ordered, length, static_cast<std::byte*>(out));
}

void SubgroupCommunicator::share_blocks(ConstBuffer mine, void* all, std::size_t per, std::size_t total,
                                        const Envelope& call) {
  const int n = size(), step = next_step();
  const Blocks blocks{total, per};
  const std::size_t element = dtype_size(mine.dtype);
  std::vector<Request> requests;
  requests.reserve(2 * static_cast<std::size_t>(n));
  for (int x = 1; x < n; ++x) {
    const int from = (rank_ + n - x) % n;
    requests.push_back(receive_from(
        from, MutBuffer(bytes_of(all) + blocks.first(from) * element, blocks.length(from), mine.dtype), step));
  }
  for (int x = 1; x < n; ++x) requests.push_back(send_to((rank_ + x) % n, mine, step));
  complete(requests, call);
}

std::unique_ptr<Request::State> SubgroupCommunicator::post_barrier() {
  const Envelope call{Operation::Barrier, -1, Channel::Collective, 0, RingLevel::Flat, 0, DType::Bytes};
  const ConstBuffer nothing(nullptr, 0, DType::Bytes);
  const MutBuffer nowhere(nullptr, 0, DType::Bytes);
  const int n = size();
  // Everyone reports to member 0 ...
  int step = next_step();
  std::vector<Request> requests;
  if (rank_ == 0) {
    for (int m = 1; m < n; ++m) requests.push_back(receive_from(m, nowhere, step));
  } else {
    requests.push_back(send_to(0, nothing, step));
  }
  complete(requests, call);
  // ... which releases everyone once all have.
  step = next_step();
  requests.clear();
  if (rank_ == 0) {
    for (int m = 1; m < n; ++m) requests.push_back(send_to(m, nothing, step));
  } else {
    requests.push_back(receive_from(0, nowhere, step));
  }
  complete(requests, call);
  return nullptr;
}

std::unique_ptr<Request::State> SubgroupCommunicator::post_allreduce(MutBuffer data, const Envelope& e) {
  const auto n = static_cast<std::size_t>(size());
  const std::size_t per = (data.count + n - 1) / n, element = dtype_size(data.dtype);
  const Blocks blocks{data.count, per};
  std::byte* own = bytes_of(data.data) + blocks.first(rank_) * element;
  // Each member reduces its block of the data (in place: its sends are complete by then) ...
  reduce_to_owners(data, per, own, e.op, e);
  // ... and hands it to every other member.
  share_blocks(ConstBuffer(own, blocks.length(rank_), data.dtype), data.data, per, data.count, e);
  return nullptr;
}

std::unique_ptr<Request::State> SubgroupCommunicator::post_allgather(ConstBuffer mine, MutBuffer all,
                                                                     const Envelope& e) {
  share_blocks(mine, all.data, mine.count, all.count, e);
  if (mine.bytes() > 0) {  // memmove: `mine` may be this member's block of `all`
    std::memmove(bytes_of(all.data) + static_cast<std::size_t>(rank_) * mine.bytes(), mine.data, mine.bytes());
  }
  return nullptr;
}

std::unique_ptr<Request::State> SubgroupCommunicator::post_reduce_scatter(ConstBuffer all, MutBuffer mine,
                                                                          const Envelope& e) {
  reduce_to_owners(all, mine.count, mine.data, e.op, e);
  return nullptr;
}

std::unique_ptr<Request::State> SubgroupCommunicator::post_gather(ConstBuffer mine, MutBuffer all, const Envelope& e) {
  const int n = size(), step = next_step();
  std::vector<Request> requests;
  if (rank_ == 0) {
    for (int m = 1; m < n; ++m) {
      requests.push_back(receive_from(
          m, MutBuffer(bytes_of(all.data) + static_cast<std::size_t>(m) * mine.bytes(), mine.count, mine.dtype), step));
    }
  } else {
    requests.push_back(send_to(0, mine, step));
  }
  complete(requests, e);
  if (rank_ == 0 && mine.bytes() > 0) std::memmove(all.data, mine.data, mine.bytes());
  return nullptr;
}

std::unique_ptr<Request::State> SubgroupCommunicator::post_broadcast(MutBuffer data, int root, const Envelope& e) {
  const int n = size(), step = next_step();
  std::vector<Request> requests;
  if (rank_ == root) {
    for (int x = 1; x < n; ++x) requests.push_back(send_to((root + x) % n, data, step));
  } else {
    requests.push_back(receive_from(root, data, step));
  }
  complete(requests, e);
  return nullptr;
}

}  // namespace burst::rt
