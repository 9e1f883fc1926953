// One rank's attention on host tensors, for the callers whose inputs are made on the host:
// `burst run --attention-only` (random inputs, checked against a single-rank reference) and the
// executor's tests. The training step does not use it: its tensors are in the kernels' memory
// already and go to DistributedAttention as they are.
//
// The inputs are stored in the kernels' memory once, as fp32 (the executor rounds them to the
// plan's activation dtype there), and the outputs live there too; the passes read and write
// them in place, so a timed pass moves nothing to or from the host, and results are loaded
// back only when asked for.
#pragma once

#include <span>
#include <vector>

#include "runtime/executor/distributed_attention.hpp"

namespace burst::rt {

class HostAttention {
 public:
  // q [r, H, d], k and v [r, Hkv, d], d_o like q, all host fp32, stored in `attention`'s memory.
  HostAttention(DistributedAttention& attention, ConstView q, ConstView k, ConstView v, ConstView d_o);

  RingAttentionStats forward();
  // After forward(): the gradients of q, k, v.
  RingAttentionStats backward(BackwardMode mode);

  // The results, loaded to the host (waits for the passes).
  [[nodiscard]] Tensor o() const { return load(o_); }
  [[nodiscard]] std::vector<float> lse() const;
  [[nodiscard]] Tensor d_q() const { return load(d_q_); }
  [[nodiscard]] Tensor d_k() const { return load(d_k_); }
  [[nodiscard]] Tensor d_v() const { return load(d_v_); }

 private:
  // An fp32 tensor in the kernels' memory.
  struct Stored {
    MemoryBlock block;
    Shape shape;
    [[nodiscard]] Operand operand() const { return {block.data(), DType::F32, shape}; }
    [[nodiscard]] Destination destination() const { return {block.data(), DType::F32, shape}; }
  };
  [[nodiscard]] Stored store(ConstView host) const;
  [[nodiscard]] Stored allocate(Shape shape) const;
  [[nodiscard]] Tensor load(const Stored& t) const;

  DistributedAttention& attention_;
  Stored q_, k_, v_, d_o_;
  Stored o_, lse_, d_q_, d_k_, d_v_;
};

}  // namespace burst::rt
