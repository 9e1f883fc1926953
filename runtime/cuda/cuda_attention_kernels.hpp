// The block-pair kernels of attention_kernels.hpp on a CUDA GPU, in its memory.
//
// Everything a call reads or writes is already in device memory (memory() is a
// DeviceKernelMemory on this object's device and stream, or a training step's on the step's
// stream, where the ring executor keeps its blocks): Q, K, V and dO as bf16 operands, read in
// place by the flash kernels; O, lse, D and the gradients fp32. The first call of a block pair
// uploads its global positions, block-sparse table and tile list (tile_list.hpp, built on the
// host) and keeps them on the device for the pair's later calls; a call launches the kernels of
// flash_attention.hpp on the object's stream; it returns without waiting for them (Options::
// timed: it waits, and reports their time in KernelStats::device_s). Forward and merge
// overwrite O and lse, delta writes D, backward ADDS its dQ, dK, dV contributions (the ring
// steps of one block sum into the same buffers, as on the CPU). The memory's operations are
// queued on the same stream, so everything runs in call order; what moves a block between GPUs
// waits on stream() first (the NCCL transport).
//
// KernelStats count as the CPU kernels do, over the GPU's 64 x 64 tiles: tiles computed and
// skipped per head, flops 4 d per score of a computed tile forward and 10 d backward, and the
// attending (head, query, key) triples. CUDA events around each call's kernels give their
// device time: per call when timed, in total through take_device_seconds.
//
// Every CUDA call is checked: a failure throws burst::Error naming the call and CUDA's message;
// constructing it where no device is visible throws "no CUDA device visible (<reason>)".
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "runtime/cuda/kernel_path.hpp"
#include "runtime/kernels/attention_kernels.hpp"

namespace burst::rt {

struct CudaKernelOptions {
  int device = 0;              // CUDA device ordinal (of those visible)
  bool deterministic = false;  // backward without float atomics: bitwise repeatable runs
  bool timed = false;          // each call waits for its kernels to report their time (--trace)
  // Each call's kernels between two events, read by take_device_seconds (a ring pass's compute
  // time, which waits for them). Off in a training step, whose parts the step times itself
  // (StepKernels::time_span): then a pass waits for nothing.
  bool device_times = true;
  // The kernels' implementation, forward and backward (runtime/cuda/kernel_path.hpp): auto, or
  // one by name; a path this device cannot run fails the first call with the reason.
  gpu::KernelPathChoice path = gpu::KernelPathChoice::Auto;
};

class CudaAttentionKernels final : public AttentionKernels {
 public:
  using Options = CudaKernelOptions;
  // On a stream and in a memory of their own.
  explicit CudaAttentionKernels(Options options = {});
  // On `stream` (a cudaStream_t) and in `memory` (device memory queued on that stream): a GPU
  // training step's (CudaStepKernels::stream(), memory()), so the attention reads the step's
  // tensors in place and writes into its buffers in stream order, with nothing to synchronise
  // between the two. Both must outlive this object.
  CudaAttentionKernels(Options options, void* stream, KernelMemory& memory);
  ~CudaAttentionKernels() override;
  CudaAttentionKernels(const CudaAttentionKernels&) = delete;
  CudaAttentionKernels& operator=(const CudaAttentionKernels&) = delete;

  [[nodiscard]] std::string_view device() const override { return "cuda"; }
  // bf16 inputs (the kernels load bf16 tiles) and the two head dims the kernels are built for.
  [[nodiscard]] KernelLimits limits() const override { return {false, {64, 128}}; }
  [[nodiscard]] KernelMemory& memory() override;
  [[nodiscard]] double take_device_seconds() override;
  // The stream every call and memory operation is queued on (a cudaStream_t).
  [[nodiscard]] void* stream() const;
  KernelStats forward(const PairOperands& in, const AttentionMask& mask, float* o, float* lse) override;
  void merge(Shape shape, float* o, float* lse, const float* o_i, const float* lse_i) override;
  // o and d_o fp32.
  void delta(Operand o, Operand d_o, float* delta) override;
  KernelStats backward(const PairOperands& in, const AttentionMask& mask, Operand d_o, const float* delta,
                       const float* lse, float* d_q, float* d_k, float* d_v) override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace burst::rt
