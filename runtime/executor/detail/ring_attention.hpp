// Distributed attention over the plan's ring: forward and both backward modes, on this rank's
// tokens, with the execution's kernels (attention_kernels.hpp: CPU, or CUDA) and a
// Communicator (runtime/comm). Inputs are tensors in the kernels' memory in the activation
// dtype, read in place; every block and accumulator stays there (ring_pass.hpp), and so do the
// results, in fp32: nothing of a pass crosses to the host.
//
// Forward: K,V blocks travel the read ring (RingSchedule::read_hops); every step this rank
// computes its queries against the block it holds and merges the partial (O, lse) in fp32.
// Backward, query side (BurstAttention): K,V stay; the pack Q, dO, D, lse travels the read ring;
// each step adds this rank's keys' share to dK, dV locally and a partial dQ for the visiting
// block, which is added to that block's dQ accumulator arriving from its previous contributor
// (one step behind) and sent on; a final hop returns it home.
// Backward, K,V ring (RingAttention): Q, dO, D, lse stay; K,V travel; the dK,dV accumulators
// follow them one step behind and return home; dQ accumulates locally.
//
// Double buffering: at step s every transfer that leaves or reaches this rank at s is posted
// before the step computes, and waited only when its data is used (receives) or at the end of
// the step (sends). Blocks the mask leaves empty are neither computed nor sent. Without
// overlap (the plan's overlap: false) each step's read transfers complete before it computes.
//
// Precision (precision.hpp): K, V, Q and dO travel in the activation dtype, D and lse in fp32,
// the accumulators in their own dtype; the caller hands in tensors stored in the activation
// dtype (DistributedAttention does).
#pragma once

#include <vector>

#include "runtime/comm/communicator.hpp"
#include "runtime/executor/attention_execution.hpp"
#include "runtime/executor/detail/ring_pass.hpp"
#include "runtime/schedule/wire_format.hpp"
#include "runtime/schedule/ring_schedule.hpp"

namespace burst::rt {

// A pass's results in the kernels' memory, fp32: o [c, H, d] and lse [c * H]; or the gradients
// of q, k and v in their shapes.
struct RingOutputs {
  MemoryBlock o, lse;
  RingAttentionStats stats;
};

struct RingGradients {
  MemoryBlock d_q, d_k, d_v;
  RingAttentionStats stats;
};

class RingAttention {
 public:
  // This rank's place is schedule.ring_rank(comm.rank()). Shapes: q [c, H, d], k and v [c, Hkv, d].
  // With a recorder, both phases' ring loops record their timeline there (run_trace.hpp).
  RingAttention(const RingSchedule& schedule, Communicator& comm, Shape q_shape, Shape kv_shape,
                AttentionExecution execution = {});

  // q, k, v in the kernels' memory, stored in the activation dtype.
  [[nodiscard]] RingOutputs forward(Operand q, Operand k, Operand v);
  // `o` (any stored dtype) and `lse` (fp32) from forward(), d_o like q; gradients of this rank's q, k and v.
  [[nodiscard]] RingGradients backward(BackwardMode mode, Operand q, Operand k, Operand v, Operand o, Operand lse,
                                       Operand d_o);

 private:
  [[nodiscard]] std::span<const std::int64_t> positions(int ring_rank) const;
  // K and V of a K,V block (kv_block_wire: K, then V, in the activation dtype) in the kernels' memory.
  [[nodiscard]] std::pair<Operand, Operand> kv_operands(const std::byte* payload) const;
  // This rank's block of `wire`'s parts, copied from `parts` (one per part, of its dtype and count).
  [[nodiscard]] MemoryBlock assemble(const WireFormat& wire, std::initializer_list<Operand> parts) const;
  // Throws burst::Error naming `what` unless `t` is stored as `dtype` with `shape`'s elements.
  void require(const Operand& t, DType dtype, Shape shape, const char* what) const;
  // Runs a pass in the kernels' memory with the execution's recorder and overlap; `stats` gets
  // the kernels' device time where the backend measures it.
  RingPassResult run_pass(RingPassSpec spec, RingAttentionStats& stats);

  const RingSchedule& schedule_;
  Communicator& comm_;
  Shape q_shape_, kv_shape_;
  AttentionExecution execution_;
  AttentionKernels& kernels_;
  AttentionMask mask_;
  int me_;                                            // ring rank
  std::vector<std::vector<std::int64_t>> positions_;  // per ring rank
};

}  // namespace burst::rt
