// Tensor parallelism of the decoder (model.hpp) as Megatron-LM runs it with sequence
// parallelism: what one of tp ranks holds of the model, and how its part maps to the whole.
//
// A layer's matrices split so that each pair needs one collective each way:
//   column-parallel  Wq, Wk, Wv, Wgate, Wup [in, out]: rank t holds columns [t out/tp, (t+1) out/tp)
//                    (its heads / tp query heads and kv_heads / tp KV heads; its ffn / tp features)
//   row-parallel     Wo [q_dim, hidden], Wdown [ffn, hidden]: rank t holds rows [t in/tp, (t+1) in/tp),
//                    the rows its column-parallel partner produced; x Wo is then a partial sum.
//   replicated       the norm gains, the embedding and the LM head: every rank holds all of them.
// So rank t's part is itself a decoder of the same shape with heads / tp, kv_heads / tp and
// ffn / tp (local()), and the step runs it unchanged between the collectives (train_step.hpp):
// sequence parallelism keeps 1 / tp of the rows outside the pairs; an all-gather of the rows
// enters each pair and a reduce-scatter of the partial sums leaves it, and the backward mirrors
// both. The replicated tensors then see only the rank's rows: their gradients are partial sums
// over the tensor-parallel group (replicated()), which it all-reduces.
//
// (Megatron splits the embedding and the LM head by vocabulary as well; here they are
// replicated, which costs memory, not correctness: docs/runtime-training.md.)
#pragma once

#include <span>
#include <vector>

#include "runtime/training/model.hpp"

namespace burst::rt {

// The decoder one of `tp` ranks holds: heads, KV heads and ffn divided by tp. Throws
// burst::Error naming plan:/strategy/tp when tp does not divide them.
[[nodiscard]] ModelSpec tensor_parallel_spec(const ModelSpec& whole, int tp);

class TensorParallelShard {
 public:
  // Rank `rank` (0 .. tp - 1) of `tp` over the whole model's layout (kept by reference).
  TensorParallelShard(const ModelLayout& whole, int tp, int rank);

  [[nodiscard]] const ModelLayout& local() const { return local_; }
  [[nodiscard]] int tp() const { return tp_; }
  // This rank's part of a whole-model vector (parameters, gradients, AdamW moments), in local()'s layout.
  [[nodiscard]] std::vector<float> extract(std::span<const float> whole) const;
  // Writes this rank's part back into a whole-model vector (its replicated tensors too).
  void insert(std::span<const float> part, std::span<float> whole) const;
  // The local tensors every rank holds whole, whose gradients the group sums.
  [[nodiscard]] const std::vector<Slice>& replicated() const { return replicated_; }

 private:
  // A tensor's floats: `rows` runs of `run` floats, at `whole_stride` apart in the whole and
  // one after another in the part, the first at `whole_first` of the whole.
  struct Piece {
    std::size_t whole_first = 0, part_first = 0, rows = 0, run = 0, whole_stride = 0;
  };
  template <typename Copy>
  void for_each_run(Copy&& copy) const;

  const ModelLayout& whole_;
  ModelLayout local_;
  int tp_;
  std::vector<Piece> pieces_;
  std::vector<Slice> replicated_;
};

}  // namespace burst::rt
