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
// and the memory they compute in (kernel_memory.hpp): every pointer an operation takes is in
// that memory. Inputs are Operands, a tensor stored as fp32 or bf16 values (a bf16 plan's
// tensors travel and stay as bf16, the kernels read them in place); outputs, statistics (lse,
// D) and gradients are fp32. Positions stay on the host (the backend makes its tile lists
// from them).
//
// Backends: CpuAttentionKernels (here, the tiled CPU kernels in host memory) and
// CudaAttentionKernels (runtime/cuda/, built with BURST_WITH_CUDA, in device memory): the same
// plan, the same schedule, other kernels.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/comm/dtype.hpp"
#include "runtime/kernels/attention.hpp"
#include "runtime/kernels/kernel_memory.hpp"

namespace burst::rt {

// What a backend can compute; the executor refuses a plan outside it before anything runs.
struct KernelLimits {
  bool fp32_inputs = true;     // false: inputs must be bf16 (a bf16 plan)
  std::vector<int> head_dims;  // the head dims it has kernels for; empty: any
};

// A tensor in the kernels' memory: `shape` elements of `dtype` (fp32 or bf16) at `data`.
struct Operand {
  const std::byte* data = nullptr;
  DType dtype = DType::F32;
  Shape shape;
};

// A tensor the distributed executor writes, in the kernels' memory (a training step's buffer).
struct Destination {
  std::byte* data = nullptr;
  DType dtype = DType::F32;
  Shape shape;
  [[nodiscard]] Operand operand() const { return {data, dtype, shape}; }
};

struct PairOperands {
  Operand q, k, v;                                         // q [nq, H, d]; k, v [nk, Hkv, d]
  std::span<const std::int64_t> q_positions, k_positions;  // host
};

class AttentionKernels {
 public:
  virtual ~AttentionKernels() = default;
  // "cpu", "cuda": what run reports print.
  [[nodiscard]] virtual std::string_view device() const = 0;
  [[nodiscard]] virtual KernelLimits limits() const { return {}; }
  [[nodiscard]] virtual KernelMemory& memory() = 0;
  // The kernels' device time since the last take, once they have run (a backend whose calls
  // return before their kernels finish waits for them here); 0 where the backend does not
  // measure it apart (the CPU: its calls are its kernels, timed by the caller).
  [[nodiscard]] virtual double take_device_seconds() { return 0.0; }

  // o [nq, H, d] and lse [nq * H].
  virtual KernelStats forward(const PairOperands& in, const AttentionMask& mask, float* o, float* lse) = 0;
  // o, o_i of `shape`; lse, lse_i one per (token, head).
  virtual void merge(Shape shape, float* o, float* lse, const float* o_i, const float* lse_i) = 0;
  // o and d_o fp32.
  virtual void delta(Operand o, Operand d_o, float* delta) = 0;
  // d_o like q; delta, lse [nq * H]; adds into d_q like q and d_k, d_v like k.
  virtual KernelStats backward(const PairOperands& in, const AttentionMask& mask, Operand d_o, const float* delta,
                               const float* lse, float* d_q, float* d_k, float* d_v) = 0;
};

// The tiled CPU kernels of attention.hpp with fixed options, in host memory. bf16 operands are
// widened to fp32 (exactly) before the kernels read them.
class CpuAttentionKernels final : public AttentionKernels {
 public:
  // `memory`: the memory they compute in, which they read and write directly (a training step's:
  // host memory, or the CPU tests' stand-in for device memory); null: host memory of their own.
  explicit CpuAttentionKernels(KernelOptions options = {}, KernelMemory* memory = nullptr)
      : options_(options), memory_(memory != nullptr ? *memory : own_memory_) {}
  [[nodiscard]] std::string_view device() const override { return "cpu"; }
  [[nodiscard]] KernelMemory& memory() override { return memory_; }
  KernelStats forward(const PairOperands& in, const AttentionMask& mask, float* o, float* lse) override;
  void merge(Shape shape, float* o, float* lse, const float* o_i, const float* lse_i) override;
  void delta(Operand o, Operand d_o, float* delta) override;
  KernelStats backward(const PairOperands& in, const AttentionMask& mask, Operand d_o, const float* delta,
                       const float* lse, float* d_q, float* d_k, float* d_v) override;

 private:
  KernelOptions options_;
  HostKernelMemory own_memory_;
  KernelMemory& memory_;
};

}  // namespace burst::rt
