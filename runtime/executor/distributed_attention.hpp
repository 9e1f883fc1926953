// Attention as a plan distributes it: a Ulysses head split inside each group around the ring
// attention across groups (USP), of which the plain ring (Ulysses degree 1) and plain Ulysses
// (ring of 1) are the corners. The training step and `burst run --attention-only` call this,
// never RingAttention directly, so every family runs through one path.
//
// A rank holds r = c/U rows of all H heads (c the ring rank's tokens, RingSchedule::
// rank_positions). Around the ring pass:
//
//   forward   scatter Q, K, V      [r, H, d] -> [c, H/U, d]    (all-to-all in the group)
//             ring forward over member j's ring, heads [j H/U, (j+1) H/U)
//             gather O and lse     [c, H/U, d] -> [r, H, d]
//   backward  scatter Q, K, V, O, lse, dO; ring backward; gather dQ, dK, dV
//
// Scatter: block i of the send buffer is this rank's r rows of member i's head slice; the
// blocks received from members 0..U-1 are their rows in member order, which is the ring rank's
// row order, so the receive buffer is the [c, H/U, d] tensor as it is. Gather is the inverse.
// K,V heads split the same way (KV_l = KV/U); query head h uses KV head h / (H/KV) before and
// after, because both splits are contiguous.
//
// Memory: every tensor in and out is in the kernels' memory (kernel_memory.hpp: device memory
// for the CUDA kernels), read and written in place; the scatter packs and the gather unpacks
// with strided copies there (KernelMemory::copy_rows), this rank's own block without the
// communicator, the others' through all_to_all on the same memory (NCCL's grouped sends and
// receives between processes, the loopback's copies within one). Nothing crosses to the host.
//
// Precision (precision.hpp): with bf16 activations the inputs are stored as bf16 on the way in
// (a copy only where the caller holds fp32, the CPU step's) and the outputs O, dQ, dK, dV
// rounded to bf16 on the way out, whatever dtype the caller stores them in; the all-to-alls
// move them as bf16 and lse as fp32; the ring does the rest.
//
// The backward scatters Q, K, V, O and lse again rather than keep the forward's head-split
// copies: the training step keeps its activations in row form for the projections, so this
// costs (c/U)(2h + 2h_kv + H_l) more elements per peer than the simulator's backward (which
// moves dO in and dQ, dK, dV out only); the report counts all-to-all bytes on their own
// channel, apart from the ring levels. The head-split copies are charged to the pass's
// ring_buffer_bytes: they are the attention's working memory, alive only while it runs.
#pragma once

#include <memory>
#include <vector>

#include "runtime/comm/communicator.hpp"
#include "runtime/executor/attention_execution.hpp"
#include "runtime/schedule/ring_schedule.hpp"

namespace burst::rt {

class RingAttention;  // detail/ring_attention.hpp: the ring itself, this class's own business

class DistributedAttention {
 public:
  // Local shapes: q [r, H, d], k and v [r, Hkv, d] with r = this rank's rows.
  DistributedAttention(const RingSchedule& schedule, Communicator& comm, Shape q_shape, Shape kv_shape,
                       AttentionExecution execution = {});
  ~DistributedAttention();
  DistributedAttention(const DistributedAttention&) = delete;
  DistributedAttention& operator=(const DistributedAttention&) = delete;

  // The memory every tensor in and out lives in: the execution's kernels'.
  [[nodiscard]] KernelMemory& memory() const { return memory_; }

  // Writes O [r, H, d] and lse [r * H] (fp32) of this rank's rows, over the whole sequence; q, k, v
  // are stored as fp32 or bf16, o as either.
  RingAttentionStats forward(Operand q, Operand k, Operand v, Destination o, Destination lse);
  // Writes the gradients of this rank's q, k, v; o and lse from forward(), d_o like q.
  RingAttentionStats backward(BackwardMode mode, Operand q, Operand k, Operand v, Operand o, Operand lse, Operand d_o,
                              Destination d_q, Destination d_k, Destination d_v);

 private:
  // A tensor in the kernels' memory, and the block holding it when it is a copy of ours.
  struct Held {
    MemoryBlock block;
    Operand operand;
  };
  // `t` stored as `dtype`: itself, or a copy converted in the kernels' memory.
  [[nodiscard]] Held as_dtype(Operand t, DType dtype) const;
  // The ring's fp32 result `values` of `shape` stored as `dtype`, rounded as the activations are.
  [[nodiscard]] Held stored(const MemoryBlock& values, Shape shape, DType dtype) const;
  // The ring's fp32 result `values` of `shape` written into `d`, rounded as the activations are.
  void write_rounded(const MemoryBlock& values, Shape shape, Destination d) const;
  // Writes `t` (of the destination's shape) into `d`, converting its dtype where they differ.
  void write(const Operand& t, Destination d) const;
  // [r, heads, d] rows of all heads -> [c, heads/U, d] rows of the group for this member's heads.
  [[nodiscard]] Held scatter(Operand local, UlyssesTensor tensor);
  // The inverse: [c, heads/U, d] -> [r, heads, d] rows in `local` (of split's dtype).
  void gather(Operand split, UlyssesTensor tensor, std::byte* local);
  // The Ulysses results of `split` gathered into `d` (through a copy where d's dtype differs).
  void gather_into(Operand split, UlyssesTensor tensor, Destination d);
  // The group all-to-all of `bytes` per member's block (this rank's own block is left alone).
  void exchange(const std::byte* send, std::byte* recv, std::size_t block_elements, DType dtype, UlyssesTensor tensor);

  Communicator& comm_;
  KernelMemory& memory_;
  int u_;
  std::size_t member_ = 0;  // this rank's place in group_
  std::vector<int> group_;
  Shape q_shape_, kv_shape_;  // local
  Shape q_split_, kv_split_;  // after the scatter
  RingLevel level_;           // where the all-to-all's bytes are counted
  AttentionPrecision precision_;
  std::unique_ptr<RingAttention> ring_;
};

}  // namespace burst::rt
