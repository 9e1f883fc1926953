// The ring schedule of a plan, as the runtime runs it: which block each ring rank computes with
// at each step (common/ring_geometry.hpp, the simulator's schedule), which messages carry the
// blocks there, and which carry the gradient accumulators home.
//
// Read ring (forward K,V; backward K,V or the query pack Q, dO, D, lse): block b is held at step
// t by ring rank visitor(b, t). K,V travel "forward" (rank k to k+1); the query pack travels the
// other way round, the same geometry on mirrored positions p = R-1-k, as the simulator lowers
// it: under causal-like masks the keys a query block needs lie before it and the queries a key
// block serves after it, so both journeys reach every rank that needs them first and the
// skipped hops below cut the rest (on a full journey the direction changes nothing). Inside an outer step it moves
// along the inner ring, each hop one step ahead of its use (double buffering: sent while the holder computes). In a
// double ring the block that starts outer step o+1 on rank (n, l) is the one rank (n-1, l) started outer step o with:
// it crosses nodes on the same rail, sent as soon as (n-1, l) has it, so it travels over IB for a whole outer step of
// inner computation. A hop is made only if some later holder on its branch needs the block: the mask leaves the pair
// (queries, keys) empty otherwise, and neither compute nor transfer is spent on it.
//
// Accumulators (dQ in the query-side backward, dK,dV in the K,V-ring backward) follow their
// block from contributor to contributor (the ranks whose pair with it is not empty), one step
// behind the block, and a final hop returns them to the block's owner.
//
// Ulysses x ring (USP): with Ulysses degree U the plan has U rings, one per member j, all on
// this same schedule over ring ranks; the Ulysses group of ring rank k is the k-th rank of every
// member's ring. The group owns ring rank k's tokens (positions(k), c of them); member j holds
// rows [j c/U, (j+1) c/U) of them, all heads, until the all-to-all trades them for all c rows
// of its H/U heads (executor/distributed_attention.hpp). U = 1 is the plain ring.
//
// Data and tensor parallelism: the plan's world is dp replicas of tp x cp x ulysses ranks, replica
// d the d-th world / dp ranks, and inside a replica tensor-parallel rank t is every rank w with
// w mod tp = t (a tensor-parallel group is tp consecutive ranks). Each (replica, tensor-parallel
// rank) is a context-parallel group, number d tp + t, with rings of its own (plan:/rings/i/dp and
// /tp) on the same geometry and token sets, carrying that rank's heads / tp heads. A schedule is
// one group's: its rings over world ranks, so the job's communicator carries every group's
// transfers side by side and messages never cross groups.
//
// check() verifies statically that every non-empty (query block, key block) pair is computed
// exactly once and that every hop leaves a rank that holds its data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/ring_geometry.hpp"
#include "common/token_sets.hpp"
#include "plan/plan.hpp"
#include "runtime/comm/communicator.hpp"

namespace burst::rt {

// What travels on the read ring, which decides whether a holder needs it: K,V blocks are needed
// by a holder whose queries see their keys; query packs by a holder whose keys they see.
enum class Travel { KeysAndValues, Queries };

// The tensors the Ulysses all-to-alls move, numbered: a tensor's number is the step its
// messages carry, so messages of different tensors never match (executor/distributed_attention).
enum class UlyssesTensor { Q, K, V, O, Lse, DO, DQ, DK, DV };

struct Hop {
  int block = 0;         // owner (ring rank) of the data
  int src = 0, dst = 0;  // ring ranks
  int send_step = 0;     // the step from which src holds the data (it sends then)
  int use_step = 0;      // the step at which dst computes with it (ring size: after the last step)
  RingLevel level = RingLevel::Flat;
};

class RingSchedule {
 public:
  // The plan's rings (one per Ulysses member; a double ring's intra and inter orders must agree)
  // over a sequence of `seq` tokens (the plan's, or a smaller one for a dry run). Throws
  // burst::Error naming the plan field when the runtime cannot run it: rings that disagree with
  // the strategy or each other, a Ulysses degree that does not divide the heads, a length the
  // layout and the groups cannot split. `context`: the context-parallel group whose rings these
  // are (0 for a plan of one replica without tensor parallelism; context_of below).
  RingSchedule(const plan::Plan& plan, std::int64_t seq, int context = 0);

  // The data-parallel replica a world rank belongs to: the d-th world / dp ranks are replica d.
  [[nodiscard]] static int replica_of(const plan::Plan& plan, int world_rank);
  // Its context-parallel group: replica d, tensor-parallel rank t is group d tp + t.
  [[nodiscard]] static int context_of(const plan::Plan& plan, int world_rank);
  [[nodiscard]] int context() const { return context_; }
  // Every group's schedule, group g at index g. A rank builds them all, not only its own, so
  // that every rank of a job refuses a plan whose rings are wrong in any group, the same way.
  [[nodiscard]] static std::vector<RingSchedule> every_context(const plan::Plan& plan, std::int64_t seq);
  // Whether a world rank is in this schedule's group.
  [[nodiscard]] bool holds(int world_rank) const {
    return world_rank >= 0 && world_rank < static_cast<int>(ring_of_world_.size()) &&
           ring_of_world_[static_cast<std::size_t>(world_rank)] >= 0;
  }

  [[nodiscard]] int ring_size() const { return geometry_.ring; }
  [[nodiscard]] const RingGeometry& geometry() const { return geometry_; }
  [[nodiscard]] std::int64_t seq() const { return seq_; }
  [[nodiscard]] const Mask& mask() const { return mask_; }
  [[nodiscard]] int ulysses() const { return geometry_.ulysses; }
  // The level a Ulysses group's all-to-all bytes are counted under: a group is consecutive
  // ranks, inside a node whenever it fits, so intra beside a double ring's levels, flat otherwise.
  [[nodiscard]] RingLevel ulysses_level() const { return geometry_.outer == 1 ? RingLevel::Flat : RingLevel::Intra; }
  // The world rank at `ring_rank` of Ulysses member `member`'s ring.
  [[nodiscard]] int world_rank(int ring_rank, int member) const {
    return world_of_ring_[static_cast<std::size_t>(member)][static_cast<std::size_t>(ring_rank)];
  }
  [[nodiscard]] int ring_rank(int world_rank) const { return ring_of_world_[static_cast<std::size_t>(world_rank)]; }
  [[nodiscard]] int member(int world_rank) const { return member_of_world_[static_cast<std::size_t>(world_rank)]; }
  // The Ulysses group of a ring rank: its world ranks in member order (one rank when U = 1).
  [[nodiscard]] std::vector<int> group(int ring_rank) const;
  // The block `ring_rank` holds at `step` on the read ring of `travel`, and who holds `block`.
  [[nodiscard]] int block_at(Travel travel, int ring_rank, int step) const;
  [[nodiscard]] int holder(Travel travel, int block, int step) const;
  [[nodiscard]] const TokenSet& tokens(int ring_rank) const { return tokens_[static_cast<std::size_t>(ring_rank)]; }
  // The global positions of a ring rank's tokens (its whole group's), in the order its rows are stored.
  [[nodiscard]] std::vector<std::int64_t> positions(int ring_rank) const;
  // The positions of the rows a world rank holds outside attention: its member's share of its
  // group's positions (all of them when U = 1).
  [[nodiscard]] std::vector<std::int64_t> rank_positions(int world_rank) const;
  // Whether the mask allows any pair between the queries of one block and the keys of another.
  [[nodiscard]] bool pair_needed(int query_block, int key_block) const;
  // Whether the holder of `block` at `step` computes with it.
  [[nodiscard]] bool holder_needs(Travel travel, int block, int step) const;

  [[nodiscard]] std::vector<Hop> read_hops(Travel travel) const;
  [[nodiscard]] std::vector<Hop> accumulator_hops(Travel travel) const;

  // Problems, one line each; empty when the schedule is complete (see the head comment).
  [[nodiscard]] std::vector<std::string> check() const;
  // Throws burst::Error listing check()'s problems, if any (they would be a bug of ours).
  void require_complete() const;

 private:
  [[nodiscard]] RingLevel level_between(int src, int dst) const;

  RingGeometry geometry_;
  std::int64_t seq_ = 0;
  Mask mask_;
  int context_ = 0;
  std::vector<std::vector<int>> world_of_ring_;  // [member][ring rank]
  std::vector<int> ring_of_world_, member_of_world_;
  std::vector<TokenSet> tokens_;
  std::vector<std::uint8_t> needed_;  // ring x ring: pair_needed(q, k) at q * ring + k
};

}  // namespace burst::rt
