// The NCCL operations of a plan's attention, as data: for one rank and one phase, the ordered
// list of NCCL groups the rank issues, each on one communicator, each a few sends and receives.
//
// Why a list. NCCL has no tags. It pairs the k-th send from rank a to rank b with the k-th
// receive at b from a, per communicator, in posting order. The operations between
// ncclGroupStart and ncclGroupEnd are issued together and the group completes only when every
// peer has posted its side; a communicator runs one group at a time; and groups on several
// communicators must be issued in one consistent order on every rank (one host thread per
// device, NCCL_LAUNCH_ORDER_IMPLICIT), or two ranks can each wait inside a group the other has
// not reached yet. The MPI backend gets matching from tags (comm/tag.hpp): messages of any step
// and channel may be posted in any order. An NCCL backend gets it only from the order it
// issues operations in, so that order is made here, by a pure function of the plan, and
// checked for every rank at once on the CPU (nccl_op_check.hpp) before any GPU runs it.
//
// Communicators. NCCL serialises the groups of one communicator, so two transfers overlap only
// on two communicators. The backward keeps two rings in flight (the read ring: K,V or the query
// pack; the accumulator ring: dQ or dK,dV one step behind), and a double ring keeps its intra
// and inter hops in flight together (a block crosses nodes for a whole outer step while the
// intra ring turns). So there is one communicator per ring and level: read and accumulator,
// each flat, or intra and inter; plus the Ulysses group's for the all-to-alls when U > 1.
//
// The list, in the order the executor posts (executor/detail/ring_pass.hpp,
// executor/distributed_attention.hpp), derived from the same RingSchedule hops and wire sizes:
//   warm-up   one group per communicator the plan's forward and backward use, a one-element
//             exchange with every peer the rank sends to or receives from there, both
//             directions in one group: it opens NCCL's lazily made connections before anything
//             overlaps (a ring of send-only groups followed by receive-only ones would wait on
//             itself). Issued once, before the first forward.
//   forward   [Ulysses: Q, K, V scattered, one group each], then for every ring step s the read
//             group of each level holding the hops RingPass posts at s (receives of blocks it
//             will use, sends of blocks it holds), then [Ulysses: O, lse gathered].
//   backward  [Ulysses: Q, K, V, O, dO, lse scattered], every step's read groups and then its
//             accumulator groups (the accumulator receives RingPass posts at s and the send it
//             makes once step s has computed: the group is issued after that compute), then
//             [Ulysses: dQ, dK, dV gathered].
// Each step's sends and receives on one communicator form one group (never an ungrouped
// send/receive pair, which deadlocks two ranks sending to each other). Within a step the
// groups go in communicator order (read before accumulator, flat or intra before inter), the
// same on every rank, and every operation meets its partner in the partner's group of the same
// (communicator, step): that is why the whole job cannot deadlock, and nccl_op_check proves it
// per plan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "plan/plan.hpp"
#include "runtime/comm/communicator.hpp"
#include "runtime/schedule/precision.hpp"
#include "runtime/kernels/tensor.hpp"
#include "runtime/schedule/ring_schedule.hpp"

namespace burst::rt {

enum class NcclPhase { WarmUp, Forward, Backward };
[[nodiscard]] std::string_view to_string(NcclPhase phase);  // "warm-up", "forward", "backward"

// Which ring a communicator carries: the read ring, the accumulator ring, or the Ulysses group.
enum class NcclRing { Read, Accumulator, Ulysses };

struct NcclComm {
  NcclRing ring = NcclRing::Read;
  // The ring level; the Ulysses group's is the level the executor counts its bytes under.
  RingLevel level = RingLevel::Flat;
  friend bool operator==(const NcclComm&, const NcclComm&) = default;
};
inline constexpr int kNcclCommCount = 3 * kRingLevelCount;
// 0 .. kNcclCommCount-1, in issue order within a step: read before accumulator, flat, intra, inter.
[[nodiscard]] int comm_index(NcclComm comm);
// "read ring (intra)", "accumulator ring (flat)", "ulysses group (intra)": as messages say them.
[[nodiscard]] std::string to_string(NcclComm comm);

enum class NcclDirection : std::uint8_t { Send, Recv };

struct NcclOp {
  NcclDirection direction = NcclDirection::Send;
  int peer = -1;  // world rank
  std::size_t bytes = 0;
  DType dtype = DType::Bytes;  // what NCCL is told: bytes / dtype_size(dtype) elements of it
  // What travels: the executor's channel for it and, on a ring channel, the block (its owner's
  // ring rank; an accumulator is its block's); on the Ulysses channel the UlyssesTensor; a
  // warm-up says Channel::Collective and block -1.
  Channel channel = Channel::Collective;
  int block = -1;
  // The step the executor's Envelope names for this message (its MPI tag): a ring hop's use
  // step, an all-to-all's tensor; -1 for a warm-up.
  int envelope_step = -1;
  // A send of data this rank received earlier in the list (a block it passes on, an
  // accumulator it added its share to): the receive must be in an earlier group.
  bool forwards = false;
  friend bool operator==(const NcclOp&, const NcclOp&) = default;
};

struct NcclGroup {
  NcclComm comm;
  // Ring communicators: the ring step at which RingPass posts these transfers (a hop's send
  // step). Ulysses: the tensor's all-to-all step. Warm-up: -1.
  int step = 0;
  std::vector<NcclOp> ops;
  friend bool operator==(const NcclGroup&, const NcclGroup&) = default;
};

// One rank's groups in the order its host thread issues them.
using NcclOpList = std::vector<NcclGroup>;

// "kv block 3", "dq accumulator of block 3", "ulysses lse", "warm-up": what an op carries.
[[nodiscard]] std::string describe_payload(const NcclOp& op);

// The op lists of one plan at one sequence length (the plan's, or a dry run's: the lists depend
// on the block structure, the sizes scale with the length). The schedule and both phases' hops
// are built once, here, and shared by every rank's list. Throws burst::Error where RingSchedule
// or the plan's precision does (a plan the runtime cannot run). The lists are one
// context-parallel group's (a data-parallel replica's ranks of one tensor-parallel index, on that
// rank's heads / tp heads; ring_schedule.hpp): groups exchange nothing during attention.
class NcclOpLists {
 public:
  NcclOpLists(const plan::Plan& plan, std::int64_t seq, int context = 0);

  // A rank of this group (burst::Error for any other).
  [[nodiscard]] NcclOpList of(int world_rank, NcclPhase phase) const;
  // Every rank's list, indexed by world rank; the ranks of other groups have empty lists.
  [[nodiscard]] std::vector<NcclOpList> all(NcclPhase phase) const;

 private:
  // One hop's message: its bytes on the wire and the dtype NCCL is told.
  struct Message {
    std::size_t bytes = 0;
    DType dtype = DType::Bytes;
  };
  // What travels in one phase, and the hops touching each ring rank in posting order.
  struct PhaseHops {
    Channel read_channel = Channel::KvRing;
    Message payload;
    Channel accumulator_channel = Channel::DqRing;
    Message accumulator;                                // 0 bytes: no accumulators travel
    std::vector<std::vector<Hop>> reads, accumulators;  // [ring rank]: the hops it sends or receives
    std::vector<int> first_contributor;                 // [block]: the ring rank that starts its accumulator
  };
  [[nodiscard]] PhaseHops hops_of(NcclPhase phase) const;
  [[nodiscard]] NcclOpList list(int world_rank, NcclPhase phase) const;
  [[nodiscard]] NcclOpList warm_up(int world_rank) const;
  void add_ring(int world_rank, const PhaseHops& hops, NcclOpList& out) const;
  void add_ulysses(int world_rank, std::initializer_list<UlyssesTensor> tensors, NcclOpList& out) const;

  RingSchedule schedule_;
  int world_ = 0;  // the plan's ranks, every group's
  BackwardMode backward_mode_;
  AttentionPrecision precision_;
  Shape q_local_, kv_local_;  // a rank's rows, all heads: [r, H, d], [r, Hkv, d]
  Shape q_ring_, kv_ring_;    // what the ring computes on: [c, H/U, d], [c, Hkv/U, d]
  PhaseHops forward_hops_, backward_hops_;
};

// One rank's list: NcclOpLists(plan, seq, its context-parallel group).of(world_rank, phase).
[[nodiscard]] NcclOpList nccl_op_list(const plan::Plan& plan, int world_rank, std::int64_t seq, NcclPhase phase);

}  // namespace burst::rt
