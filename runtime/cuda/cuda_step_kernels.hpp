// The operations of one training step (runtime/training/step_kernels.hpp) on a CUDA GPU.
//
// Everything lives in the device memory of memory() (a DeviceKernelMemory on this object's
// device and stream): activations and their gradients bf16, the parameters the layers read
// bf16 (bind_params reads the model state's bf16 working copy in place, or uploads a unit's
// host fp32 values and rounds them on the GPU), inverse RMS, logits and parameter gradients
// fp32; squared_norm and adamw_update run the optimizer kernels on a state kept in this memory.
// Every call is queued on the object's one non-blocking stream, in call order, and returns at
// once, except those that hand something to the host: cross_entropy_loss, return_gradients of
// host gradients, squared_norm and settle_times wait, and set_positions / the token uploads wait
// when a host staging slot must be reused before its copy ran (below). bind_params of host
// values returns once the driver has staged them (pageable memory) or at once (page-locked
// memory, read when the stream reaches the copy).
//
//   linear_*          cuBLASLt (cublaslt_gemm.hpp) on the row-major shapes of gemm_shape.hpp,
//                     operands in layer_ops.cpp's order; bf16 operands, fp32 accumulation; y
//                     bf16 or fp32 (the logits); dW fp32 accumulated (beta 1)
//   rms_norm, rope, swiglu, residual_add, embedding   the training kernels (training_kernels.hpp)
//   cross_entropy_*   the cross-entropy kernels (one block per row, deterministic)
//
// Host arrays a call needs on the device (positions, token ids, token groups, targets) go
// through 8 pinned staging slots taken in turn: a call waits for the copy that last read its
// slot (an event, 8 uploads ago: long done in a warm step) before rewriting it, then copies it
// into a block of memory() on the stream. The block is freed in stream order, after the kernels
// that read it.
//
// The kernels are deterministic for fixed sizes (no float atomics) and cuBLASLt's plan is
// chosen once per shape (cuBLAS states repeatable bits on one GPU model; not checked here), so
// CudaKernelOptions::deterministic changes nothing here and `timed` is not used (the step
// times its phases and parts with time_span(): CUDA events on the stream, read at the step's
// end). Every CUDA call is
// checked (cuda_check.hpp); a tensor of the wrong dtype or size throws burst::Error naming the
// call and the argument.
//
// Not verified on a GPU: burst_step_kernels_gpu_tests compares every call with the CPU's
// layer_ops.hpp where a GPU is visible (docs/runtime-cuda-training.md).
#pragma once

#include <memory>

#include "runtime/cuda/cuda_attention_kernels.hpp"
#include "runtime/training/step_kernels.hpp"

namespace burst::rt {

class CudaStepKernels final : public StepKernels {
 public:
  // Throws burst::Error when the device is not visible ("no CUDA device visible (<reason>)").
  explicit CudaStepKernels(CudaKernelOptions options = {});
  ~CudaStepKernels() override;
  CudaStepKernels(const CudaStepKernels&) = delete;
  CudaStepKernels& operator=(const CudaStepKernels&) = delete;

  [[nodiscard]] std::string_view device() const override { return "cuda"; }
  [[nodiscard]] KernelMemory& memory() override;
  [[nodiscard]] DType activation_dtype() const override { return DType::BF16; }
  // The stream every call and memory operation is queued on (a cudaStream_t).
  [[nodiscard]] void* stream() const;

  void set_positions(std::span<const std::int64_t> positions) override;
  [[nodiscard]] BoundTensor bind_params(StepTensor params) override;
  [[nodiscard]] BoundTensor bind_gradients(StepTensor grads) override;
  void return_gradients(const BoundTensor& bound, StepTensor grads) override;
  [[nodiscard]] double squared_norm(StepTensor grads) override;
  void adamw_update(const AdamWTensors& range, std::span<const ParamGroup> groups, double norm, std::int64_t step,
                    const AdamWConfig& config) override;

  void linear_forward(StepTensor x, std::int64_t rows, std::int64_t in, StepTensor w, std::int64_t out,
                      StepTensor y) override;
  void linear_backward(StepTensor x, std::int64_t rows, std::int64_t in, StepTensor w, std::int64_t out, StepTensor dy,
                       StepTensor dx, StepTensor dw, bool accumulate_dx) override;
  void rms_norm_forward(StepTensor x, StepTensor gain, std::int64_t rows, std::int64_t dim, StepTensor y,
                        StepTensor inv_rms) override;
  void add_rms_norm_forward(StepTensor a, StepTensor b, StepTensor sum, StepTensor gain, std::int64_t rows,
                            std::int64_t dim, StepTensor y, StepTensor inv_rms) override;
  void rms_norm_backward(StepTensor x, StepTensor gain, StepTensor inv_rms, StepTensor dy, std::int64_t rows,
                         std::int64_t dim, StepTensor skip, StepTensor dx, StepTensor dgain) override;
  void rope(StepTensor q, std::int64_t heads, StepTensor k, std::int64_t kv_heads, std::int64_t head_dim, float base,
            bool backward) override;
  void swiglu_forward(StepTensor u, StepTensor w, StepTensor m) override;
  void swiglu_backward(StepTensor u, StepTensor w, StepTensor dm, StepTensor du, StepTensor dw) override;
  void residual_add(StepTensor a, StepTensor b, StepTensor out) override;
  void copy(StepTensor src, StepTensor dst) override;
  void embedding_forward(std::span<const std::int32_t> tokens, StepTensor table, std::int64_t vocab, std::int64_t dim,
                         StepTensor out) override;
  void embedding_backward(std::span<const std::int32_t> tokens, StepTensor dout, std::int64_t vocab, std::int64_t dim,
                          StepTensor dtable) override;
  [[nodiscard]] LmHeadForward cross_entropy_loss(StepTensor logits, std::int64_t rows, std::int64_t vocab,
                                                 std::span<const std::int32_t> targets) override;
  void cross_entropy_backward(StepTensor logits, std::int64_t rows, std::int64_t vocab,
                              std::span<const std::int32_t> targets, double scale, StepTensor dl) override;
  void time_span(const std::function<void()>& part, double& seconds) override;
  void settle_times() override;
  void discard_times() override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace burst::rt
