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
// Precision (precision.hpp): with bf16 activations the inputs are rounded to bf16 on the way in
// (what storing them as bf16 keeps) and the outputs O, dQ, dK, dV on the way out; the
// all-to-alls move them as bf16 and lse as fp32; the ring does the rest.
//
// The backward scatters Q, K, V, O and lse again rather than keep the forward's head-split
// copies: the training step keeps its activations in row form for the projections, so this
// costs (c/U)(2h + 2h_kv + H_l) more elements per peer than the simulator's backward (which
// moves dO in and dQ, dK, dV out only); the report counts all-to-all bytes on their own
// channel, apart from the ring levels. The head-split copies are charged to the pass's
// ring_buffer_bytes: they are the attention's working memory, alive only while it runs.
#pragma once

#include <span>
#include <vector>

#include "runtime/comm/communicator.hpp"
#include "runtime/executor/detail/ring_attention.hpp"
#include "runtime/schedule/ring_schedule.hpp"

namespace burst::rt {

class DistributedAttention {
 public:
  // Local shapes: q [r, H, d], k and v [r, Hkv, d] with r = this rank's rows.
  DistributedAttention(const RingSchedule& schedule, Communicator& comm, Shape q_shape, Shape kv_shape,
                       AttentionExecution execution = {});

  // O [r, H, d] and lse [r * H] of this rank's rows, over the whole sequence.
  [[nodiscard]] RingForward forward(ConstView q, ConstView k, ConstView v);
  // Gradients of this rank's q, k, v; o and lse from forward().
  [[nodiscard]] RingBackward backward(BackwardMode mode, ConstView q, ConstView k, ConstView v, ConstView o,
                                      std::span<const float> lse, ConstView d_o);

 private:
  // [r, heads, d] rows of all heads -> [c, heads/U, d] rows of the group for this member's heads.
  [[nodiscard]] Tensor scatter(ConstView local, UlyssesTensor tensor, DType wire);
  // The inverse: [c, heads/U, d] -> [r, heads, d].
  [[nodiscard]] Tensor gather(ConstView split, UlyssesTensor tensor, DType wire);
  // The group all-to-all of fp32 values sent as `wire` (bf16 values round-trip exactly).
  void exchange(std::span<const float> send, std::span<float> recv, int step, DType wire);
  // The view the ring reads: `t` itself in fp32; in bf16 a rounded copy, kept alive in `keep`.
  [[nodiscard]] ConstView as_stored(ConstView t, Tensor& keep) const;

  Communicator& comm_;
  int u_;
  std::vector<int> group_;
  Shape q_shape_, kv_shape_;  // local
  Shape q_split_, kv_split_;  // after the scatter
  RingLevel level_;           // where the all-to-all's bytes are counted
  AttentionPrecision precision_;
  RingAttention ring_;
};

}  // namespace burst::rt
