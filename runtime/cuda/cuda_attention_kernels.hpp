// The block-pair kernels of attention_kernels.hpp on a CUDA GPU.
//
// The executor hands host fp32 views whose values are already bf16-rounded (precision.hpp);
// each call converts them to bf16 (exact for such values), uploads them and the rows' global
// positions into device buffers that grow but are never shrunk (reused by every later call),
// builds the pair's tile list on the host (tile_list.hpp) and uploads it, launches the kernels
// of flash_attention.hpp on the object's stream, and brings the results back: forward and
// merge overwrite O and lse, delta writes D, backward ADDS its dQ, dK, dV contributions into the
// host views (the ring steps of one block sum into the same buffers, as on the CPU).
//
// KernelStats count as the CPU kernels do, over the GPU's 64 x 64 tiles: tiles computed and
// skipped per head, flops 4 d per score of a computed tile forward and 10 d backward, and the
// attending (head, query, key) triples.
//
// Every CUDA call is checked: a failure throws burst::Error naming the call and CUDA's message;
// constructing it where no device is visible throws "no CUDA device visible (<reason>)".
// Calls are synchronous for the caller (they return when the results are in host memory).
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "runtime/kernels/attention_kernels.hpp"

namespace burst::rt {

struct CudaKernelOptions {
  int device = 0;              // CUDA device ordinal (of those visible)
  bool deterministic = false;  // backward without float atomics: bitwise repeatable runs
};

class CudaAttentionKernels final : public AttentionKernels {
 public:
  using Options = CudaKernelOptions;
  explicit CudaAttentionKernels(Options options = {});
  ~CudaAttentionKernels() override;
  CudaAttentionKernels(const CudaAttentionKernels&) = delete;
  CudaAttentionKernels& operator=(const CudaAttentionKernels&) = delete;

  [[nodiscard]] std::string_view device() const override { return "cuda"; }
  // bf16 inputs (the kernels load bf16 tiles) and the two head dims the kernels are built for.
  [[nodiscard]] KernelLimits limits() const override { return {false, {64, 128}}; }
  KernelStats forward(const BlockPair& in, const AttentionMask& mask, View o, std::span<float> lse) override;
  void merge(View o, std::span<float> lse, ConstView o_i, std::span<const float> lse_i) override;
  void delta(ConstView o, ConstView d_o, std::span<float> delta) override;
  KernelStats backward(const BlockPair& in, const AttentionMask& mask, ConstView d_o, std::span<const float> delta,
                       std::span<const float> lse, View d_q, View d_k, View d_v) override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace burst::rt
