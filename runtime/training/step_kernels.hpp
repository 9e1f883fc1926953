// The operations of one training step over tensors in one backend's memory, so that the step
// (train_step.hpp), the chunked LM head (lm_head_loss.hpp) and their checkpoint logic are one
// piece of code on the CPU and on the GPU. The step decides what lives when; a StepKernels does
// the arithmetic where the tensors are:
//
//   HostStepKernels (here)     host memory, fp32 everywhere: layer_ops.hpp over OpenBLAS
//   CudaStepKernels (cuda/)    device memory: activations and the layers' parameters in bf16,
//                              statistics and gradients in fp32; dense products through
//                              cuBLASLt, the rest through the training kernels; one stream
//
// Dtypes. A tensor is stored as the backend's activation_dtype() (the activations, their
// gradients, the parameters the layers read) or as fp32 (inverse RMS, lse, parameter gradients,
// the LM head's logits). A linear layer's output may be either: the logits are fp32.
//
// Parameters and gradients stay where the model state lives (a WeightSource, zero_model.hpp):
// host fp32, or this backend's own memory. The step binds a unit's parameters for as long as it
// uses them and a zeroed fp32 buffer for its gradients, which return_gradients() hands back when
// the unit's backward is done. Where the state is this backend's own memory, both are the
// state's bytes, read and accumulated in place (no copy); host state on the GPU is uploaded (the
// unit's fp32 values, rounded to bf16 on the device) and its gradients loaded back.
//
// The optimizer runs where the state lives too: squared_norm gives a range's share of the global
// gradient norm, adamw_update steps a range of fp32 master weights and moments (adamw.hpp) and
// rewrites the layers' working copy of it where that is a separate, narrower tensor (the GPU's
// bf16 parameters). A backend's memory holds the state of any run that keeps it there.
//
// Ordering: calls run in the order made (on the GPU: queued on one stream, so a call may return
// before it ran; the attention kernels of a GPU step queue on the same stream). Whatever reads a
// result on the host (a loss, a gradient norm, a host gradient) goes through a call that waits:
// cross_entropy_loss, squared_norm, return_gradients, KernelMemory::load, settle_times.
// Outputs are overwritten and parameter gradients accumulate (+=), as in layer_ops.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/comm/dtype.hpp"
#include "runtime/kernels/kernel_memory.hpp"
#include "runtime/kernels/tensor.hpp"
#include "runtime/training/adamw.hpp"

namespace burst::rt {

// `count` elements of `dtype` (fp32 or bf16) at `data`, in host memory or a StepKernels' device memory.
struct StepTensor {
  std::byte* data = nullptr;
  std::size_t count = 0;
  DType dtype = DType::F32;
  MemorySpace space = MemorySpace::Host;

  [[nodiscard]] std::size_t bytes() const { return count * dtype_size(dtype); }
  // Elements [first, first + n) of this tensor.
  [[nodiscard]] StepTensor part(std::size_t first, std::size_t n) const {
    return {data + first * dtype_size(dtype), n, dtype, space};
  }
};

// The tensor as a communicator's buffer (its memory must be one the communicator reads).
[[nodiscard]] inline MutBuffer buffer_of(const StepTensor& t) { return {t.data, t.count, t.dtype}; }

// A tensor with the storage it lives in (empty when it is the caller's memory, read in place).
struct BoundTensor {
  StepTensor tensor;
  MemoryBlock storage;
};

// One range [offset, offset + n) of the flat parameters for adamw_update: fp32 master weights,
// gradients (clipped by the global norm's factor; the host backend scales them in place), m and
// v, n elements each, and the layers' working copy in the activation dtype, or an empty tensor
// where the master weights are what the layers read (fp32 state: the CPU's).
struct AdamWTensors {
  std::size_t offset = 0;
  StepTensor master, grads, m, v;
  StepTensor working;
};

// The sums of a chunk of the cross-entropy (lm_head_loss.hpp).
struct LmHeadForward {
  double loss_sum = 0;       // summed over counted tokens
  std::int64_t counted = 0;  // tokens whose target is not -1
};

class StepKernels {
 public:
  virtual ~StepKernels() = default;
  [[nodiscard]] virtual std::string_view device() const = 0;
  [[nodiscard]] virtual KernelMemory& memory() = 0;
  [[nodiscard]] virtual DType activation_dtype() const = 0;

  // The step's token positions (RoPE), one per local row, fixed until the next call: a view of
  // the caller's vector, which must outlive the kernels' use of it.
  virtual void set_positions(std::span<const std::int64_t> positions) = 0;

  // A unit's parameters as the layers read them, valid while the result lives and `params`
  // does: host fp32, or (state in this memory) the working copy in the activation dtype.
  [[nodiscard]] virtual BoundTensor bind_params(StepTensor params) = 0;
  // A zeroed fp32 buffer for a unit's gradients `grads` (host, or this memory: then `grads`
  // itself), which WeightSource::gradients has zeroed.
  [[nodiscard]] virtual BoundTensor bind_gradients(StepTensor grads) = 0;
  // Leaves the bound gradients in `grads` (the tensor bind_gradients had); waits for them when
  // they go to the host.
  virtual void return_gradients(const BoundTensor& bound, StepTensor grads) = 0;

  // Sum of the squares of fp32 `grads` (this memory), in double; waits.
  [[nodiscard]] virtual double squared_norm(StepTensor grads) = 0;
  // AdamW step `step` on `range` (this memory) given the global gradient `norm` (adamw.hpp);
  // `groups` are the whole vector's.
  virtual void adamw_update(const AdamWTensors& range, std::span<const ParamGroup> groups, double norm,
                            std::int64_t step, const AdamWConfig& config) = 0;

  // y [rows, out] = x [rows, in] W [in, out]; y is activation_dtype() or fp32.
  virtual void linear_forward(StepTensor x, std::int64_t rows, std::int64_t in, StepTensor w, std::int64_t out,
                              StepTensor y) = 0;
  // dx = dy W^T (overwritten, or added when accumulate_dx); dW (fp32) += x^T dy.
  virtual void linear_backward(StepTensor x, std::int64_t rows, std::int64_t in, StepTensor w, std::int64_t out,
                               StepTensor dy, StepTensor dx, StepTensor dw, bool accumulate_dx) = 0;
  // y [rows, dim] and inv_rms [rows] (fp32).
  virtual void rms_norm_forward(StepTensor x, StepTensor gain, std::int64_t rows, std::int64_t dim, StepTensor y,
                                StepTensor inv_rms) = 0;
  // The residual stream's add and the next norm: sum = a + b (sum may be a or b), then
  // y, inv_rms = RMSNorm(sum). The GPU does both in one kernel (one read of a and b, one launch);
  // by default, residual_add then rms_norm_forward.
  virtual void add_rms_norm_forward(StepTensor a, StepTensor b, StepTensor sum, StepTensor gain, std::int64_t rows,
                                    std::int64_t dim, StepTensor y, StepTensor inv_rms);
  // dx overwritten: the norm's backward of dy, plus `skip` where it is not empty (the gradient
  // that reaches x around the norm through the residual connection: the add fused); dgain
  // (fp32) accumulated.
  virtual void rms_norm_backward(StepTensor x, StepTensor gain, StepTensor inv_rms, StepTensor dy, std::int64_t rows,
                                 std::int64_t dim, StepTensor skip, StepTensor dx, StepTensor dgain) = 0;
  // In place on q [rows, heads, head_dim] and k [rows, kv_heads, head_dim] at set_positions()'s
  // positions, with the model's rotary base (one pass: each angle once for both); backward
  // turns back.
  virtual void rope(StepTensor q, std::int64_t heads, StepTensor k, std::int64_t kv_heads, std::int64_t head_dim,
                    float base, bool backward) = 0;
  virtual void swiglu_forward(StepTensor u, StepTensor w, StepTensor m) = 0;
  virtual void swiglu_backward(StepTensor u, StepTensor w, StepTensor dm, StepTensor du, StepTensor dw) = 0;
  // out = a + b elementwise; out may be a or b.
  virtual void residual_add(StepTensor a, StepTensor b, StepTensor out) = 0;
  // dst = src (same dtype and count).
  virtual void copy(StepTensor src, StepTensor dst) = 0;
  // out [tokens, dim] = table rows; dtable (fp32) += dout rows. Every token in [0, vocab).
  virtual void embedding_forward(std::span<const std::int32_t> tokens, StepTensor table, std::int64_t vocab,
                                 std::int64_t dim, StepTensor out) = 0;
  virtual void embedding_backward(std::span<const std::int32_t> tokens, StepTensor dout, std::int64_t vocab,
                                  std::int64_t dim, StepTensor dtable) = 0;

  // The loss terms of fp32 logits [rows, vocab], one target per row (-1: not counted); waits.
  [[nodiscard]] virtual LmHeadForward cross_entropy_loss(StepTensor logits, std::int64_t rows, std::int64_t vocab,
                                                         std::span<const std::int32_t> targets) = 0;
  // dl = scale (softmax(logits) - onehot(target)) per row, 0 for ignored rows, into `dl`
  // (activation_dtype(); the logits themselves where that is fp32, the CPU's, else a buffer of its own).
  virtual void cross_entropy_backward(StepTensor logits, std::int64_t rows, std::int64_t vocab,
                                      std::span<const std::int32_t> targets, double scale, StepTensor dl) = 0;

  // Runs `part` (calls on this backend, and host work between them) and adds its span in
  // seconds on the backend's clock to `seconds`: on the CPU at once, by the host's steady clock;
  // on the GPU at the next settle_times(), from two CUDA events recorded on the stream around it
  // (cudaEventElapsedTime: from where the stream reached the part to its last kernel's end, as
  // the device saw it). Nothing waits or drains the queue on the way, so timing costs the step no
  // host wait. The step's phases and parts are timed so (train_step.cpp); spans may nest.
  // `seconds` must live until settle_times().
  virtual void time_span(const std::function<void()>& part, double& seconds) = 0;
  // Adds every pending span into its `seconds` (the GPU waits for the last one); the step calls
  // it once, at its end.
  virtual void settle_times() {}
  // Forgets every pending span without reading it (a step that failed: its `seconds` are gone).
  virtual void discard_times() {}
};

// The CPU backend: host memory, fp32, the ops of layer_ops.hpp and the CPU cross-entropy.
class HostStepKernels final : public StepKernels {
 public:
  // `memory`: host memory of any kind (a GPU run's offloaded model state lives in page-locked
  // memory, runtime/cuda/pinned_host_memory.hpp); plain host memory by default.
  explicit HostStepKernels(std::unique_ptr<KernelMemory> memory = std::make_unique<HostKernelMemory>());
  [[nodiscard]] std::string_view device() const override { return "cpu"; }
  [[nodiscard]] KernelMemory& memory() override { return *memory_; }
  [[nodiscard]] DType activation_dtype() const override { return DType::F32; }
  void set_positions(std::span<const std::int64_t> positions) override { positions_ = positions; }
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

 private:
  std::unique_ptr<KernelMemory> memory_;
  std::span<const std::int64_t> positions_;
};

// Host fp32 values as a tensor (the CPU backend's, and tests').
[[nodiscard]] StepTensor host_tensor(std::span<float> values);
[[nodiscard]] StepTensor host_tensor(std::span<const float> values);
// A vector's values (a vector converts to both spans above, so it needs its own overload).
[[nodiscard]] StepTensor host_tensor(std::vector<float>& values);

}  // namespace burst::rt
