// A communicator over some of a parent communicator's ranks: the collectives of a tensor-parallel
// group or of a ZeRO sharding group, on whatever backend the job runs.
//
// Why a subgroup: the job's communicator spans every rank, but a model split several ways
// reduces and gathers over subsets of them. A tensor-parallel group is a few consecutive ranks
// inside one node (ranks 0-1, 2-3, ... at TP 2), which all-reduce the partial sums of their
// split matmuls. Under tensor parallelism each rank holds only its TP slice of every weight, so
// the ZeRO sharding group is not the world either: it is the ranks of one tensor-parallel index
// across the context- and data-parallel ranks (ranks 0, 2, 4, ... and 1, 3, 5, ... at TP 2),
// which reduce-scatter and all-gather that slice's gradients and parameters. Both are
// collectives over a subset of the world, and both groups are in use on a rank at once,
// interleaved.
//
// Why over point-to-point: every backend already sends and receives between any two of its
// ranks (Communicator::isend / irecv, the same transfers the rings use), so collectives built
// from them work on every backend unchanged: the loopback needs no meeting points per group and
// MPI no MPI_Comm_split (a collective call that every world rank must make, in the same order,
// when the groups are formed). A SubgroupCommunicator holds only the list of its members, the
// parent ranks in increasing order; its rank is this rank's index in that list.
//
// The algorithms are the direct ones, each member exchanging with every other:
//   reduce_scatter  member j gets block j from every member and reduces the n blocks in member
//                   order 0, 1, ..., n-1 (its own in its place), so the result has the same
//                   bits whichever member computes it, and the same as the loopback's
//   allgather       each member sends its block to every other and receives theirs
//   allreduce       a reduce_scatter of n equal blocks (the last ones shorter or empty when n
//                   does not divide the count), then an allgather of the reduced blocks: every
//                   element is reduced once, by its block's owner, in member order, so every
//                   member ends with identical bits
//   gather_to_root  every member sends to member 0
//   broadcast       the root sends to every other member
//   barrier         every member sends an empty message to member 0, which answers each once
//                   all have come
// What they cost: reduce-scatter then all-gather moves 2(n-1)/n of the data out of (and into)
// each member, as a ring does, in n-1 messages a phase instead of a ring's n-1 steps; the
// direct exchange has no ring latency chain, and n is a TP or sharding degree (2 to 8 mostly).
//
// The messages go on the parent's Channel::Collective at RingLevel::Flat, numbered by a step
// counter of this communicator that every member advances identically (every member calls the
// same collectives in the same order), one step a phase. The steps wrap after 2729, the largest
// step whose tags fit the least tag bound MPI allows (MPI_TAG_UB >= 32767, comm/tag.hpp):
// messages with one tag between two ranks are matched in the order they were sent, on every
// backend, so a wrapped step can never be taken for an earlier one. Communicators that share a
// pair of ranks (two subgroups, or a subgroup and its parent's own transfers on
// Channel::Collective at RingLevel::Flat) must be used in the same order on both ranks, as any
// blocking collective must be anyway.
//
// Guarantees and limits:
// - Host buffers only (reads_device_memory() is false): the reductions run on the CPU of each
//   member, whatever the parent could move.
// - Every collective, the posted iallgather / ireduce_scatter included, completes before it
//   returns: its Request is not pending, and waiting on it does nothing. (A subgroup's posted
//   collective therefore overlaps no compute; the interface allows a complete Request.)
// - Reductions: Sum and Max over fp32, fp64, bf16 (in fp32, rounded once), int32, int64 and uint64,
//   in member order, as the loopback's (comm/detail/reduce_in_order.hpp).
// - Each phase waits at most the parent's timeout (the options are the parent's); a late one
//   fails with a burst::Error that names this rank of the subgroup and of the parent, the
//   members, the collective, and the parent's timeout message (the world rank that never sent).
//   A timed-out MPI send may still read its buffer: end the job with abort_job, as after any
//   timeout.
// - Point-to-point transfers go straight to the parent with the peer translated to its parent
//   rank. Their argument checks and timeouts name subgroup ranks, as rank() does; failures the
//   parent's backend reports (a size mismatch, an MPI error) name parent ranks.
// - Byte counters: this communicator counts what is handed to it, as every communicator does;
//   the parent's counters do not see the subgroup's messages.
// - abort_all ends the job through the parent.
// - The parent is the job's communicator (loopback or MPI), or another subgroup. Not an NCCL
//   communicator: that one carries only the transfers of its plan's op list, in device memory.
// Thread safety: the parent's thread drives it (one thread per rank, as every communicator).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/comm/communicator.hpp"

namespace burst::rt {

// `members` when they are a group `parent`'s rank may form: parent ranks in increasing order,
// each once, this rank among them; else burst::Error naming this rank, the list and what is wrong.
[[nodiscard]] std::vector<int> checked_members(const Communicator& parent, std::vector<int> members);

class SubgroupCommunicator final : public Communicator {
 public:
  // The members are parent ranks in increasing order, this rank among them, the same list on
  // every member. Throws burst::Error naming every fault of the list (empty, not increasing,
  // a rank outside the parent, this rank missing). The parent must outlive this communicator.
  SubgroupCommunicator(Communicator& parent, std::vector<int> members);

  // This rank's index in the members; the number of members.
  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return static_cast<int>(members_.size()); }
  // The parent's: which GPU this rank drives does not depend on the group.
  [[nodiscard]] int local_rank() const override { return parent_.local_rank(); }
  [[nodiscard]] int local_size() const override { return parent_.local_size(); }
  // Host buffers only: the reductions run on the host.
  [[nodiscard]] bool reads_device_memory() const override { return false; }
  [[nodiscard]] bool reduces_bf16() const override { return true; }

  [[nodiscard]] const std::vector<int>& members() const { return members_; }
  // Payload bytes this member's messages to the other members have carried (its collectives'
  // phases and its own sends): what left this rank on the wire, as a simulator counts traffic.
  [[nodiscard]] std::uint64_t wire_bytes() const { return wire_bytes_; }
  // The parent rank of member `member` (0 .. size() - 1).
  [[nodiscard]] int parent_rank(int member) const { return members_[static_cast<std::size_t>(member)]; }

 protected:
  std::unique_ptr<Request::State> post_send(ConstBuffer data, const Envelope& e) override;
  std::unique_ptr<Request::State> post_recv(MutBuffer data, const Envelope& e) override;
  std::unique_ptr<Request::State> post_barrier() override;
  std::unique_ptr<Request::State> post_allreduce(MutBuffer data, const Envelope& e) override;
  std::unique_ptr<Request::State> post_allgather(ConstBuffer mine, MutBuffer all, const Envelope& e) override;
  std::unique_ptr<Request::State> post_reduce_scatter(ConstBuffer all, MutBuffer mine, const Envelope& e) override;
  std::unique_ptr<Request::State> post_gather(ConstBuffer mine, MutBuffer all, const Envelope& e) override;
  std::unique_ptr<Request::State> post_broadcast(MutBuffer data, int root, const Envelope& e) override;
  bool test(Request::State& state, const Envelope& e) override;
  void abort_backend(int exit_code) const override;

 private:
  // The envelope with its peer (a member) as the parent rank.
  [[nodiscard]] Envelope on_parent(const Envelope& e) const;
  // The next phase's step (the counter, wrapped below the MPI-guaranteed tag bound).
  int next_step();
  // A receive from / send to member `member` on the parent at `step`, posted now.
  Request receive_from(int member, MutBuffer data, int step);
  Request send_to(int member, ConstBuffer data, int step);
  // Completes one phase's requests on the parent; a failure becomes an Error naming `call`.
  void complete(std::vector<Request>& requests, const Envelope& call);
  // One reduce-scatter phase: `input` in blocks of `per` elements (the last ones shorter or
  // empty), block j from every member to member j, which reduces them in member order into `out`.
  void reduce_to_owners(ConstBuffer input, std::size_t per, void* out, ReduceOp op, const Envelope& call);
  // One all-gather phase: `mine` to every other member; member m's block (of `per` elements of
  // `total`, as above) into `all`. This member's own block is left to the caller.
  void share_blocks(ConstBuffer mine, void* all, std::size_t per, std::size_t total, const Envelope& call);

  Communicator& parent_;
  std::vector<int> members_;
  int rank_ = 0;
  std::uint64_t phases_ = 0;  // phases so far: the next one's step, wrapped
  std::uint64_t wire_bytes_ = 0;
};

}  // namespace burst::rt
