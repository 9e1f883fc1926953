// The kernels the distributed executor calls, behind one interface so that the ring loop, the
// Ulysses all-to-all and the training step never know which device computes.
//
// The executor works in "block pairs" (attention.hpp): one query block against one key block,
// the unit of a ring step. A backend provides the four operations of that unit, with the
// semantics attention.hpp states once for all of them:
//   forward   O, lse of the pair (overwrites; a row with no allowed key: O = 0, lse = -inf)
//   merge     fold a partial (o_i, lse_i) into the accumulator (o, lse)
//   delta     D = rowsum(O * dO)
//   backward  ADD the pair's contribution to dQ, dK, dV (given the final lse and D)
// Tensors are host fp32 views; with bf16 activations the executor has already rounded the
// inputs to bf16 values (precision.hpp), so a device that stores bf16 holds them exactly.
//
// Backends: CpuAttentionKernels (here, the tiled CPU kernels) and CudaAttentionKernels
// (runtime/cuda/, built with BURST_WITH_CUDA): the same plan, the same schedule, other kernels.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/kernels/attention.hpp"

namespace burst::rt {

// What a backend can compute; the executor refuses a plan outside it before anything runs.
struct KernelLimits {
  bool fp32_inputs = true;      // false: inputs must be bf16 values (a bf16 plan)
  std::vector<int> head_dims;   // the head dims it has kernels for; empty: any
};

class AttentionKernels {
 public:
  virtual ~AttentionKernels() = default;
  // "cpu", "cuda": what run reports print.
  [[nodiscard]] virtual std::string_view device() const = 0;
  [[nodiscard]] virtual KernelLimits limits() const { return {}; }

  virtual KernelStats forward(const BlockPair& in, const AttentionMask& mask, View o, std::span<float> lse) = 0;
  virtual void merge(View o, std::span<float> lse, ConstView o_i, std::span<const float> lse_i) = 0;
  virtual void delta(ConstView o, ConstView d_o, std::span<float> delta) = 0;
  virtual KernelStats backward(const BlockPair& in, const AttentionMask& mask, ConstView d_o,
                               std::span<const float> delta, std::span<const float> lse, View d_q, View d_k,
                               View d_v) = 0;
};

// The tiled CPU kernels of attention.hpp with fixed options.
class CpuAttentionKernels final : public AttentionKernels {
 public:
  explicit CpuAttentionKernels(KernelOptions options = {}) : options_(options) {}
  [[nodiscard]] std::string_view device() const override { return "cpu"; }
  KernelStats forward(const BlockPair& in, const AttentionMask& mask, View o, std::span<float> lse) override {
    return attention_forward(in, mask, o, lse, options_);
  }
  void merge(View o, std::span<float> lse, ConstView o_i, std::span<const float> lse_i) override {
    merge_partial(o, lse, o_i, lse_i);
  }
  void delta(ConstView o, ConstView d_o, std::span<float> delta) override { attention_delta(o, d_o, delta); }
  KernelStats backward(const BlockPair& in, const AttentionMask& mask, ConstView d_o, std::span<const float> delta,
                       std::span<const float> lse, View d_q, View d_k, View d_v) override {
    return attention_backward(in, mask, d_o, delta, lse, d_q, d_k, d_v, options_);
  }

 private:
  KernelOptions options_;
};

}  // namespace burst::rt
