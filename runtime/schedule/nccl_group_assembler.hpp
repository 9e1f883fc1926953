// From the executor's transfers to NCCL groups, one rank at a time: the host logic of the NCCL
// backend, kept apart from CUDA so the CPU tests run it against the real executor.
//
// The executor posts transfers one by one (isend / irecv with an Envelope) and knows nothing of
// NCCL. NCCL wants them grouped: each group of the rank's op list (nccl_op_list.hpp) must be
// issued whole, between ncclGroupStart and ncclGroupEnd, in list order. The assembler matches
// every posted transfer to its op in the current pass's list (same direction, peer, channel,
// level and envelope step; the byte count must agree), and says which groups have become
// complete: a group is ready once all its ops are posted and every group before it is ready, so
// groups are issued in exactly the list's order, each once.
//
// What it refuses, with an error naming the rank, the pass and the transfer (never a hang on the
// GPU): a transfer that is not in the list, one posted twice, a size that differs, and a new
// pass begun while groups of the last one are still incomplete. `incomplete(group)` names the
// ops still missing, for the error of a wait that cannot finish because its group was never
// issued (the executor would deadlock under NCCL where MPI's tags let it through).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "runtime/comm/communicator.hpp"
#include "runtime/schedule/nccl_op_list.hpp"

namespace burst::rt {

class NcclGroupAssembler {
 public:
  // The rank's forward and backward lists (NcclOpLists::of(rank, phase)).
  NcclGroupAssembler(int rank, NcclOpList forward, NcclOpList backward);

  // The executor starts a pass: its transfers follow this pass's list from the first group.
  void begin(AttentionPass pass);

  struct Slot {
    std::size_t group = 0;  // index in the current pass's list
    std::size_t op = 0;     // index in the group
  };
  // The op `e` is; throws burst::Error when it has none or the sizes differ.
  Slot post(const Envelope& e);
  // The groups that became ready since the last call, in list order.
  [[nodiscard]] std::vector<std::size_t> take_ready();

  [[nodiscard]] const NcclGroup& group(std::size_t g) const { return list().at(g); }
  [[nodiscard]] bool ready(std::size_t g) const { return g < ready_; }
  // "read ring (intra) group at step 3 still misses: recv kv block 2 from rank 1, ..."
  [[nodiscard]] std::string incomplete(std::size_t g) const;
  [[nodiscard]] AttentionPass pass() const { return pass_; }

 private:
  [[nodiscard]] const NcclOpList& list() const { return pass_ == AttentionPass::Forward ? forward_ : backward_; }

  int rank_;
  NcclOpList forward_, backward_;
  AttentionPass pass_ = AttentionPass::Forward;
  bool started_ = false;
  std::vector<std::vector<bool>> posted_;  // [group][op] of the current pass
  std::vector<std::size_t> missing_;       // [group]: ops not posted yet
  std::size_t ready_ = 0;                  // groups [0, ready_) are ready
  std::size_t reported_ = 0;               // ... of which [0, reported_) take_ready returned
};

}  // namespace burst::rt
