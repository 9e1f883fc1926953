// CudaStepKernels (see cuda_step_kernels.hpp): each call checks its tensors' dtypes and sizes
// on the host, uploads the host arrays it needs through the pinned staging buffer, and queues
// a cuBLASLt product or a training kernel on the stream.
//
// Lifetimes. The State's members are destroyed in reverse order of declaration: the stream is
// declared first, so it is synchronised and destroyed last, after the blocks that free
// themselves on it (positions), the staging buffer (only once no copy reads it) and the
// memory pool.
#include "runtime/cuda/cuda_step_kernels.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "common/bf16.hpp"
#include "common/error.hpp"
#include "runtime/cuda/detail/cublaslt_gemm.hpp"
#include "runtime/cuda/detail/cuda_event.hpp"
#include "runtime/cuda/detail/cuda_stream.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/kernels/device_traffic.hpp"
#include "runtime/cuda/device_count.hpp"
#include "runtime/cuda/detail/device_kernel_memory.hpp"
#include "runtime/cuda/detail/element_kernels.hpp"
#include "runtime/cuda/detail/event_timer.hpp"
#include "runtime/cuda/detail/token_groups.hpp"
#include "runtime/cuda/detail/training_kernels.hpp"
#include "runtime/kernels/gemm_shape.hpp"
#include "runtime/training/argument_checks.hpp"
#include "runtime/training/model.hpp"

namespace burst::rt {
namespace {

using gpu::check_cuda;

const Bf16* bf16_in(const StepTensor& t) {
  return reinterpret_cast<const Bf16*>(t.data);
}  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): bf16 storage
Bf16* bf16_out(const StepTensor& t) {
  return reinterpret_cast<Bf16*>(t.data);
}  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): bf16 storage
const float* f32_in(const StepTensor& t) {
  return reinterpret_cast<const float*>(t.data);
}  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): fp32 storage
float* f32_out(const StepTensor& t) {
  return reinterpret_cast<float*>(t.data);
}  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): fp32 storage

std::string call_name(std::string_view op) { return fmt::format("CudaStepKernels::{}", op); }

// `t` holds `count` elements (`formula` says whence) and has data when it holds any.
void need_count(Problems& p, std::string_view call, std::string_view name, const StepTensor& t, std::int64_t count,
                std::string_view formula) {
  check_size(p, call, name, t.count, count, formula);
  if (t.data == nullptr && t.count > 0) p.add(where(call, name), "no data", "a device pointer");
}

void need_dtype(Problems& p, std::string_view call, std::string_view name, const StepTensor& t, DType want) {
  if (t.dtype == want) return;
  p.add(where(call, name), fmt::format("stored as {}", to_string(t.dtype)), std::string(to_string(want)),
        want == DType::BF16 ? "the CUDA step keeps activations and the layers' parameters in bf16" : "");
}

void need_tensor(Problems& p, std::string_view call, std::string_view name, const StepTensor& t, DType dtype,
                 std::int64_t count, std::string_view formula) {
  need_dtype(p, call, name, t, dtype);
  need_count(p, call, name, t, count, formula);
}

// A product's output, bf16 (an activation) or fp32 (the logits).
void need_output(Problems& p, std::string_view call, std::string_view name, const StepTensor& t, std::int64_t count,
                 std::string_view formula) {
  if (t.dtype != DType::BF16 && t.dtype != DType::F32) {
    p.add(where(call, name), fmt::format("stored as {}", to_string(t.dtype)), "bf16 or f32");
  }
  need_count(p, call, name, t, count, formula);
}

// The model state's optimizer reads and writes device memory only (a host pointer would fault the context).
void need_device(Problems& p, std::string_view call, std::string_view name, const StepTensor& t) {
  if (t.space != MemorySpace::Device && t.count > 0)
    p.add(where(call, name), "host memory", "device memory (the model state's)");
}

gpu::GemmOutput output_of(const StepTensor& t) {
  return t.dtype == DType::F32 ? gpu::GemmOutput::F32 : gpu::GemmOutput::BF16;
}

void check_linear(Problems& p, std::string_view call, const StepTensor& x, std::int64_t rows, std::int64_t in,
                  const StepTensor& w, std::int64_t out) {
  check_at_least(p, call, "rows", rows, 0);
  check_at_least(p, call, "in", in, 1);
  check_at_least(p, call, "out", out, 1);
  need_tensor(p, call, "x", x, DType::BF16, rows * in, "rows * in");
  need_tensor(p, call, "w", w, DType::BF16, in * out, "in * out");
}

// Elementwise operands: bf16, as many as the first.
void check_same_bf16(Problems& p, std::string_view call,
                     std::initializer_list<std::pair<std::string_view, StepTensor>> tensors) {
  const auto count = static_cast<std::int64_t>(tensors.begin()->second.count);
  const std::string formula = fmt::format("as many as {}", tensors.begin()->first);
  for (const auto& named : tensors) need_tensor(p, call, named.first, named.second, DType::BF16, count, formula);
}

void check_targets(Problems& p, std::string_view call, std::span<const std::int32_t> targets, std::int64_t rows,
                   std::int64_t vocab) {
  check_at_least(p, call, "rows", rows, 0);
  check_at_least(p, call, "vocab", vocab, 1);
  check_size(p, call, "targets", targets.size(), rows, "one per row");
  check_ids(p, call, "target", targets, gpu::kIgnoredTarget, vocab,
            fmt::format("-1 (ignored) or 0 <= target < {}", vocab));
}

// Host arrays copied into one block of device memory, each part at a multiple of 16 bytes.
struct Staged {
  MemoryBlock block;
  std::vector<std::size_t> at;  // byte offset of each part

  template <typename T>
  [[nodiscard]] const T* part(std::size_t i) const {
    return reinterpret_cast<const T*>(
        block.data() + at[i]);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): the layout send() wrote
  }
};

// Pinned staging slots for the host arrays the calls send (cuda_step_kernels.hpp), taken in turn:
// a slot is rewritten only once the copy that last read it is done (an event per slot), so the
// caller's arrays may change as soon as send() returns. A step sends a few arrays (its token ids
// and targets, forward and backward), so with kSlots slots the host waits only when it has run
// kSlots uploads ahead of the device, and a warm step waits for none of them. The slots are one
// page-locked buffer, all of one size: a slot that must grow grows them all (after every slot's
// last copy), so the first step makes the one allocation and a warm step, whichever slots it
// takes, makes none.
class StagedUpload {
 public:
  StagedUpload() = default;
  StagedUpload(const StagedUpload&) = delete;
  StagedUpload& operator=(const StagedUpload&) = delete;
  ~StagedUpload() {  // after the stream is synchronised (OwnedStream outlives this); the events go after
    if (pinned_ != nullptr) (void)cudaFreeHost(pinned_);
  }

  Staged send(std::initializer_list<std::span<const std::byte>> parts, KernelMemory& memory, cudaStream_t stream) {
    Staged staged;
    std::size_t total = 0;
    for (const auto& part : parts) {
      staged.at.push_back((total + 15) / 16 * 16);
      total = staged.at.back() + part.size();
    }
    if (total == 0) return staged;
    const std::size_t slot = next_;
    next_ = (next_ + 1) % kSlots;
    std::byte* pinned = wait_and_reserve(slot, total);
    std::size_t i = 0;
    for (const auto& part : parts) std::copy(part.begin(), part.end(), pinned + staged.at[i++]);
    staged.block = memory.allocate(total);
    check_cuda(cudaMemcpyAsync(staged.block.data(), pinned, total, cudaMemcpyHostToDevice, stream),
               fmt::format("cudaMemcpyAsync(host arrays to the device, {} bytes)", total));
    count_host_to_device(total);
    check_cuda(cudaEventRecord(copied_[slot]->handle(), stream), "cudaEventRecord(after the host arrays' copy)");
    return staged;
  }

 private:
  static constexpr std::size_t kSlots = 8;

  // Waits for the last copy out of the slot (its event made on first use), then returns the
  // slot's memory, every slot grown to at least `bytes` first when it is smaller.
  std::byte* wait_and_reserve(std::size_t slot, std::size_t bytes) {
    if (!copied_[slot]) copied_[slot].emplace("a staging slot's copy");
    wait(copied_[slot]->handle());
    if (bytes > slot_bytes_) {
      for (const std::optional<gpu::OwnedEvent>& event : copied_) {
        if (event) wait(event->handle());  // no copy still reads the old buffer
      }
      const std::size_t grown = (std::max(bytes, 2 * slot_bytes_) + 15) / 16 * 16;
      if (pinned_ != nullptr) check_cuda(cudaFreeHost(pinned_), "cudaFreeHost(staging slots)");
      pinned_ = nullptr;
      slot_bytes_ = 0;
      void* p = nullptr;
      check_cuda(cudaMallocHost(&p, kSlots * grown),
                 fmt::format("cudaMallocHost(staging slots, {} x {} bytes)", kSlots, grown));
      count_driver_allocation();
      pinned_ = static_cast<std::byte*>(p);
      slot_bytes_ = grown;
    }
    return pinned_ + slot * slot_bytes_;
  }

  static void wait(cudaEvent_t event) {
    if (cudaEventQuery(event) == cudaErrorNotReady) count_host_wait();
    check_cuda(cudaEventSynchronize(event), "cudaEventSynchronize(the last copy of a staging slot)");
  }

  std::byte* pinned_ = nullptr;
  std::size_t slot_bytes_ = 0;                                 // each slot's
  std::array<std::optional<gpu::OwnedEvent>, kSlots> copied_;  // each made on its slot's first use
  std::size_t next_ = 0;
};

template <typename T>
std::span<const std::byte> bytes_of(std::span<const T> values) {
  return std::as_bytes(values);
}

}  // namespace

struct CudaStepKernels::State {
  explicit State(CudaKernelOptions o) : options(o) {}
  CudaKernelOptions options;
  gpu::OwnedStream stream;  // first: destroyed last (see the head comment)
  std::unique_ptr<gpu::DeviceKernelMemory> memory;
  std::unique_ptr<gpu::CublasLtGemm> gemm;
  StagedUpload upload;
  Staged positions;  // set_positions()'s, on the device
  std::int64_t position_count = 0;
  std::vector<double> row_loss;  // cross_entropy_loss's per-row losses, back on the host
  // time_span's event pairs (the first spans_used pending) and where each one's seconds go.
  std::vector<std::unique_ptr<gpu::EventPair>> spans;
  std::size_t spans_used = 0;
  std::size_t last_stop = 0;  // the span whose stop was recorded last
  std::vector<double*> span_seconds;

  void select_device() const {
    check_cuda(cudaSetDevice(options.device), fmt::format("cudaSetDevice({})", options.device));
  }
  Staged send(std::initializer_list<std::span<const std::byte>> parts) {
    return upload.send(parts, *memory, stream.handle());
  }
};

CudaStepKernels::CudaStepKernels(CudaKernelOptions options) {
  gpu::require_cuda_device(options.device);
  check_cuda(cudaSetDevice(options.device), fmt::format("cudaSetDevice({})", options.device));
  state_ = std::make_unique<State>(options);
  State& s = *state_;
  int major = 0;
  check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, options.device),
             "cudaDeviceGetAttribute(cudaDevAttrComputeCapabilityMajor)");
  s.memory = std::make_unique<gpu::DeviceKernelMemory>(options.device, s.stream.handle());
  s.gemm = std::make_unique<gpu::CublasLtGemm>(s.stream.handle(), gpu::recommended_gemm_workspace(major));
}

CudaStepKernels::~CudaStepKernels() {  // no throwing here
  if (!state_) return;
  (void)cudaSetDevice(state_->options.device);
  (void)cudaStreamSynchronize(state_->stream.handle());  // no copy still reads the staging buffer
}

KernelMemory& CudaStepKernels::memory() { return *state_->memory; }

void* CudaStepKernels::stream() const { return state_->stream.handle(); }

void CudaStepKernels::set_positions(std::span<const std::int64_t> positions) {
  State& s = *state_;
  s.select_device();
  s.positions = s.send({bytes_of(positions)});
  s.position_count = static_cast<std::int64_t>(positions.size());
}

BoundTensor CudaStepKernels::bind_params(StepTensor params) {
  const bool resident = params.space == MemorySpace::Device;  // the model state's own bf16 working copy
  Problems p;
  need_dtype(p, call_name("bind_params"), "params", params, resident ? DType::BF16 : DType::F32);
  p.throw_if_any();
  if (resident) return {params, {}};  // read in place
  State& s = *state_;
  s.select_device();
  BoundTensor bound{{nullptr, params.count, DType::BF16, MemorySpace::Device},
                    s.memory->allocate(params.count * sizeof(Bf16))};
  bound.tensor.data = bound.storage.data();
  if (params.count == 0) return bound;
  // Host state: the fp32 values go up as they are and the GPU rounds them: twice the bytes over
  // the bus, but no pass over the whole unit on one host thread. From page-locked memory (an
  // offloaded state, pinned_host_memory.hpp) the copy returns at once and reads the host when
  // the stream reaches it: the state does not change during a step (AdamW runs after its last
  // return_gradients, which waits for the stream). From pageable memory it returns once the
  // driver has staged the source. The fp32 block is freed on the stream after the rounding.
  const MemoryBlock staged = s.memory->allocate(params.bytes());
  check_cuda(cudaMemcpyAsync(staged.data(), params.data, params.bytes(), cudaMemcpyHostToDevice, s.stream.handle()),
             fmt::format("cudaMemcpyAsync(a unit's fp32 parameters to the device, {} bytes)", params.bytes()));
  count_host_to_device(params.bytes());
  gpu::to_bf16_on_device(staged.floats(), bound.tensor.data, params.count, s.stream.handle());
  return bound;
}

BoundTensor CudaStepKernels::bind_gradients(StepTensor grads) {
  const std::string call = call_name("bind_gradients");
  Problems p;
  need_dtype(p, call, "grads", grads, DType::F32);
  p.throw_if_any();
  if (grads.space == MemorySpace::Device) return {grads, {}};  // the state's own, zeroed by the weight source
  State& s = *state_;
  s.select_device();
  BoundTensor bound{{nullptr, grads.count, DType::F32, MemorySpace::Device}, s.memory->allocate(grads.bytes())};
  bound.tensor.data = bound.storage.data();
  s.memory->zero(bound.tensor.data, grads.bytes());
  return bound;
}

void CudaStepKernels::return_gradients(const BoundTensor& bound, StepTensor grads) {
  const std::string call = call_name("return_gradients");
  Problems p;
  need_tensor(p, call, "bound", bound.tensor, DType::F32, static_cast<std::int64_t>(grads.count),
              "the gradients' size");
  p.throw_if_any();
  if (bound.tensor.data == grads.data) return;  // accumulated in place (device state)
  state_->select_device();
  state_->memory->load(bound.tensor.data, DType::F32,
                       {reinterpret_cast<float*>(grads.data),
                        grads.count});  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): fp32
}

double CudaStepKernels::squared_norm(StepTensor grads) {
  const std::string call = call_name("squared_norm");
  Problems p;
  need_dtype(p, call, "grads", grads, DType::F32);
  need_device(p, call, "grads", grads);
  p.throw_if_any();
  if (grads.count == 0) return 0.0;
  State& s = *state_;
  s.select_device();
  const auto count = static_cast<std::int64_t>(grads.count);
  const MemoryBlock workspace =
      s.memory->allocate(static_cast<std::size_t>(gpu::squared_norm_workspace_doubles(count) + 1) * sizeof(double));
  auto* partials =
      reinterpret_cast<double*>(workspace.data());  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): fp64 storage
  gpu::squared_norm(f32_in(grads), count, partials + 1, partials, s.stream.handle());
  double result = 0;
  check_cuda(cudaMemcpyAsync(&result, partials, sizeof result, cudaMemcpyDeviceToHost, s.stream.handle()),
             "cudaMemcpyAsync(a squared gradient norm to the host)");
  check_cuda(cudaStreamSynchronize(s.stream.handle()), "cudaStreamSynchronize(after a squared gradient norm)");
  count_device_to_host(sizeof result);
  count_host_wait();
  return result;
}

// One launch per parameter group the range overlaps (each group its own weight decay), the
// scalars worked out on the host in double as the CPU's are, the element update in float.
void CudaStepKernels::adamw_update(const AdamWTensors& range, std::span<const ParamGroup> groups, double norm,
                                   std::int64_t step, const AdamWConfig& config) {
  const std::string call = call_name("adamw_update");
  const auto n = static_cast<std::int64_t>(range.master.count);
  Problems p;
  for (const auto& [name, t] : {std::pair{"master", range.master}, std::pair{"grads", range.grads},
                                std::pair{"m", range.m}, std::pair{"v", range.v}}) {
    need_tensor(p, call, name, t, DType::F32, n, "as many as master");
    need_device(p, call, name, t);
  }
  need_tensor(p, call, "working", range.working, DType::BF16, n, "as many as master (the layers' bf16 copy)");
  need_device(p, call, "working", range.working);
  check_at_least(p, call, "step", step, 1);
  p.throw_if_any();
  state_->select_device();
  const float clip = hd::adamw_clip_factor(norm, config.clip_norm);
  for_each_group_part(
      range.offset, range.master.count, groups, [&](const ParamGroup& group, std::size_t i, std::size_t count) {
        const gpu::AdamWDeviceRange part{f32_out(range.master) + i,   f32_in(range.grads) + i,
                                         f32_out(range.m) + i,        f32_out(range.v) + i,
                                         bf16_out(range.working) + i, static_cast<std::int64_t>(count)};
        gpu::adamw_update(part, group_scalars<float>(config, group, step), clip, state_->stream.handle());
      });
}

void CudaStepKernels::linear_forward(StepTensor x, std::int64_t rows, std::int64_t in, StepTensor w, std::int64_t out,
                                     StepTensor y) {
  const std::string call = call_name("linear_forward");
  Problems p;
  check_linear(p, call, x, rows, in, w, out);
  need_output(p, call, "y", y, rows * out, "rows * out");
  p.throw_if_any();
  if (rows == 0) return;
  state_->select_device();
  state_->gemm->run(linear_forward_gemm(rows, in, out), x.data, w.data, y.data, output_of(y));
}

void CudaStepKernels::linear_backward(StepTensor x, std::int64_t rows, std::int64_t in, StepTensor w, std::int64_t out,
                                      StepTensor dy, StepTensor dx, StepTensor dw, bool accumulate_dx) {
  const std::string call = call_name("linear_backward");
  Problems p;
  check_linear(p, call, x, rows, in, w, out);
  need_tensor(p, call, "dy", dy, DType::BF16, rows * out, "rows * out");
  need_output(p, call, "dx", dx, rows * in, "rows * in");
  need_tensor(p, call, "dw", dw, DType::F32, in * out, "in * out");
  p.throw_if_any();
  if (rows == 0) return;
  State& s = *state_;
  s.select_device();
  s.gemm->run(linear_input_grad_gemm(rows, in, out, accumulate_dx), dy.data, w.data, dx.data, output_of(dx));
  s.gemm->run(linear_weight_grad_gemm(rows, in, out), x.data, dy.data, dw.data, gpu::GemmOutput::F32);
}

void CudaStepKernels::rms_norm_forward(StepTensor x, StepTensor gain, std::int64_t rows, std::int64_t dim, StepTensor y,
                                       StepTensor inv_rms) {
  const std::string call = call_name("rms_norm_forward");
  Problems p;
  need_tensor(p, call, "x", x, DType::BF16, rows * dim, "rows * dim");
  need_tensor(p, call, "gain", gain, DType::BF16, dim, "dim");
  need_tensor(p, call, "y", y, DType::BF16, rows * dim, "rows * dim");
  need_tensor(p, call, "inv_rms", inv_rms, DType::F32, rows, "rows");
  p.throw_if_any();
  state_->select_device();
  gpu::rms_norm_forward(bf16_in(x), bf16_in(gain), rows, dim, kNormEps, bf16_out(y), f32_out(inv_rms),
                        state_->stream.handle());
}

void CudaStepKernels::add_rms_norm_forward(StepTensor a, StepTensor b, StepTensor sum, StepTensor gain,
                                           std::int64_t rows, std::int64_t dim, StepTensor y, StepTensor inv_rms) {
  const std::string call = call_name("add_rms_norm_forward");
  Problems p;
  for (const auto& [name, t] : {std::pair{"a", a}, std::pair{"b", b}, std::pair{"sum", sum}, std::pair{"y", y}}) {
    need_tensor(p, call, name, t, DType::BF16, rows * dim, "rows * dim");
  }
  need_tensor(p, call, "gain", gain, DType::BF16, dim, "dim");
  need_tensor(p, call, "inv_rms", inv_rms, DType::F32, rows, "rows");
  p.throw_if_any();
  state_->select_device();
  gpu::add_rms_norm_forward({bf16_in(a), bf16_in(b), bf16_out(sum)}, bf16_in(gain), rows, dim, kNormEps, bf16_out(y),
                            f32_out(inv_rms), state_->stream.handle());
}

void CudaStepKernels::rms_norm_backward(StepTensor x, StepTensor gain, StepTensor inv_rms, StepTensor dy,
                                        std::int64_t rows, std::int64_t dim, StepTensor skip, StepTensor dx,
                                        StepTensor dgain) {
  const std::string call = call_name("rms_norm_backward");
  Problems p;
  need_tensor(p, call, "x", x, DType::BF16, rows * dim, "rows * dim");
  need_tensor(p, call, "gain", gain, DType::BF16, dim, "dim");
  need_tensor(p, call, "inv_rms", inv_rms, DType::F32, rows, "rows");
  need_tensor(p, call, "dy", dy, DType::BF16, rows * dim, "rows * dim");
  if (skip.count > 0) need_tensor(p, call, "skip", skip, DType::BF16, rows * dim, "rows * dim, or none");
  need_tensor(p, call, "dx", dx, DType::BF16, rows * dim, "rows * dim");
  need_tensor(p, call, "dgain", dgain, DType::F32, dim, "dim");
  p.throw_if_any();
  State& s = *state_;
  s.select_device();
  // Freed on the stream when this returns: after the kernels that use it.
  const MemoryBlock workspace =
      s.memory->allocate(static_cast<std::size_t>(gpu::rms_norm_workspace_floats(rows, dim)) * sizeof(float));
  gpu::rms_norm_backward(bf16_in(x), bf16_in(gain), f32_in(inv_rms), bf16_in(dy),
                         skip.count > 0 ? bf16_in(skip) : nullptr, rows, dim, bf16_out(dx), f32_out(dgain),
                         workspace.floats(), s.stream.handle());
}

void CudaStepKernels::rope(StepTensor q, std::int64_t heads, StepTensor k, std::int64_t kv_heads, std::int64_t head_dim,
                           float base, bool backward) {
  const std::string call = call_name("rope");
  const State& s = *state_;
  Problems p;
  check_at_least(p, call, "heads", heads, 1);
  check_at_least(p, call, "kv_heads", kv_heads, 1);
  need_tensor(p, call, "q", q, DType::BF16, s.position_count * heads * head_dim,
              "set_positions()'s rows * heads * head_dim");
  need_tensor(p, call, "k", k, DType::BF16, s.position_count * kv_heads * head_dim,
              "set_positions()'s rows * kv_heads * head_dim");
  p.throw_if_any();
  s.select_device();
  const std::int64_t* positions = s.position_count > 0 ? s.positions.part<std::int64_t>(0) : nullptr;
  const gpu::RopeArgs args{bf16_out(q), s.position_count, heads, head_dim, positions, base, bf16_out(k), kv_heads};
  (backward ? gpu::rope_backward : gpu::rope_forward)(args, s.stream.handle());
}

void CudaStepKernels::swiglu_forward(StepTensor u, StepTensor w, StepTensor m) {
  Problems p;
  check_same_bf16(p, call_name("swiglu_forward"), {{"u", u}, {"w", w}, {"m", m}});
  p.throw_if_any();
  state_->select_device();
  gpu::swiglu_forward(bf16_in(u), bf16_in(w), bf16_out(m), static_cast<std::int64_t>(u.count), state_->stream.handle());
}

void CudaStepKernels::swiglu_backward(StepTensor u, StepTensor w, StepTensor dm, StepTensor du, StepTensor dw) {
  Problems p;
  check_same_bf16(p, call_name("swiglu_backward"), {{"u", u}, {"w", w}, {"dm", dm}, {"du", du}, {"dw", dw}});
  p.throw_if_any();
  state_->select_device();
  gpu::swiglu_backward(bf16_in(u), bf16_in(w), bf16_in(dm), bf16_out(du), bf16_out(dw),
                       static_cast<std::int64_t>(u.count), state_->stream.handle());
}

void CudaStepKernels::residual_add(StepTensor a, StepTensor b, StepTensor out) {
  Problems p;
  check_same_bf16(p, call_name("residual_add"), {{"a", a}, {"b", b}, {"out", out}});
  p.throw_if_any();
  state_->select_device();
  gpu::residual_add(bf16_in(a), bf16_in(b), bf16_out(out), static_cast<std::int64_t>(a.count), state_->stream.handle());
}

void CudaStepKernels::copy(StepTensor src, StepTensor dst) {
  const std::string call = call_name("copy");
  Problems p;
  need_tensor(p, call, "dst", dst, src.dtype, static_cast<std::int64_t>(src.count), "as many as src");
  need_count(p, call, "src", src, static_cast<std::int64_t>(src.count), "");
  p.throw_if_any();
  if (src.count == 0) return;
  state_->select_device();
  check_cuda(cudaMemcpyAsync(dst.data, src.data, src.bytes(), cudaMemcpyDeviceToDevice, state_->stream.handle()),
             fmt::format("cudaMemcpyAsync({}, {} bytes device to device)", call, src.bytes()));
}

void CudaStepKernels::embedding_forward(std::span<const std::int32_t> tokens, StepTensor table, std::int64_t vocab,
                                        std::int64_t dim, StepTensor out) {
  const std::string call = call_name("embedding_forward");
  const auto count = static_cast<std::int64_t>(tokens.size());
  Problems p;
  check_at_least(p, call, "vocab", vocab, 1);
  check_at_least(p, call, "dim", dim, 1);
  check_ids(p, call, "token", tokens, 0, vocab, fmt::format("0 <= token < {}", vocab),
            "the tokenizer and the model must agree on the vocabulary");
  need_tensor(p, call, "table", table, DType::BF16, vocab * dim, "vocab * dim");
  need_tensor(p, call, "out", out, DType::BF16, count * dim, "tokens * dim");
  p.throw_if_any();
  if (count == 0) return;
  State& s = *state_;
  s.select_device();
  const Staged ids = s.send({bytes_of(tokens)});
  gpu::embedding_forward(ids.part<std::int32_t>(0), count, bf16_in(table), vocab, dim, bf16_out(out),
                         s.stream.handle());
}

void CudaStepKernels::embedding_backward(std::span<const std::int32_t> tokens, StepTensor dout, std::int64_t vocab,
                                         std::int64_t dim, StepTensor dtable) {
  const std::string call = call_name("embedding_backward");
  const auto count = static_cast<std::int64_t>(tokens.size());
  Problems p;
  check_at_least(p, call, "vocab", vocab, 1);
  check_at_least(p, call, "dim", dim, 1);
  need_tensor(p, call, "dout", dout, DType::BF16, count * dim, "tokens * dim");
  need_tensor(p, call, "dtable", dtable, DType::F32, vocab * dim, "vocab * dim");
  p.throw_if_any();
  if (count == 0) return;
  State& s = *state_;
  s.select_device();
  const gpu::TokenGroups groups = gpu::group_tokens(tokens, vocab);  // throws on an id outside [0, vocab)
  const Staged sent = s.send({bytes_of(std::span<const std::int32_t>(groups.rows)),
                              bytes_of(std::span<const std::int32_t>(groups.offsets)),
                              bytes_of(std::span<const std::int32_t>(groups.token_index))});
  const gpu::DeviceTokenGroups device_groups{static_cast<std::int64_t>(groups.rows.size()), count,
                                             sent.part<std::int32_t>(0), sent.part<std::int32_t>(1),
                                             sent.part<std::int32_t>(2)};
  gpu::embedding_backward(device_groups, bf16_in(dout), vocab, dim, f32_out(dtable), s.stream.handle());
}

LmHeadForward CudaStepKernels::cross_entropy_loss(StepTensor logits, std::int64_t rows, std::int64_t vocab,
                                                  std::span<const std::int32_t> targets) {
  const std::string call = call_name("cross_entropy_loss");
  Problems p;
  check_targets(p, call, targets, rows, vocab);
  need_tensor(p, call, "logits", logits, DType::F32, rows * vocab, "rows * vocab");
  p.throw_if_any();
  LmHeadForward result;
  if (rows == 0) return result;
  State& s = *state_;
  s.select_device();
  const Staged sent = s.send({bytes_of(targets)});
  const MemoryBlock row_loss = s.memory->allocate(static_cast<std::size_t>(rows) * sizeof(double));
  auto* device_loss =
      reinterpret_cast<double*>(row_loss.data());  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): doubles
  gpu::cross_entropy_loss_rows(f32_in(logits), rows, vocab, sent.part<std::int32_t>(0), device_loss, s.stream.handle());
  s.row_loss.resize(static_cast<std::size_t>(rows));
  check_cuda(cudaMemcpyAsync(s.row_loss.data(), device_loss, s.row_loss.size() * sizeof(double), cudaMemcpyDeviceToHost,
                             s.stream.handle()),
             fmt::format("cudaMemcpyAsync({}: the row losses to the host)", call));
  check_cuda(cudaStreamSynchronize(s.stream.handle()), fmt::format("cudaStreamSynchronize({})", call));
  count_device_to_host(s.row_loss.size() * sizeof(double));
  count_host_wait();
  for (const double loss : s.row_loss) result.loss_sum += loss;  // row order, as the CPU adds them
  result.counted =
      std::count_if(targets.begin(), targets.end(), [](std::int32_t t) { return t != gpu::kIgnoredTarget; });
  return result;
}

void CudaStepKernels::cross_entropy_backward(StepTensor logits, std::int64_t rows, std::int64_t vocab,
                                             std::span<const std::int32_t> targets, double scale, StepTensor dl) {
  const std::string call = call_name("cross_entropy_backward");
  Problems p;
  check_targets(p, call, targets, rows, vocab);
  need_tensor(p, call, "logits", logits, DType::F32, rows * vocab, "rows * vocab");
  need_tensor(p, call, "dl", dl, DType::BF16, rows * vocab, "rows * vocab");
  if (dl.data == logits.data && dl.data != nullptr)
    p.add(where(call, "dl"), "over the fp32 logits", "a bf16 dl of its own");
  p.throw_if_any();
  if (rows == 0) return;
  State& s = *state_;
  s.select_device();
  const Staged sent = s.send({bytes_of(targets)});
  const auto scale_f = static_cast<float>(scale);
  gpu::cross_entropy_backward(f32_in(logits), rows, vocab, sent.part<std::int32_t>(0), scale_f, bf16_out(dl),
                              s.stream.handle());
}

// Two events of their own per span, so spans nest (a phase around its parts); the pairs are
// reused from one settle to the next.
void CudaStepKernels::time_span(const std::function<void()>& part, double& seconds) {
  State& s = *state_;
  s.select_device();
  if (s.spans_used == s.spans.size()) s.spans.push_back(std::make_unique<gpu::EventPair>());
  const std::size_t index = s.spans_used++;
  const gpu::EventPair& span = *s.spans[index];
  s.span_seconds.push_back(&seconds);
  span.record_start(s.stream.handle());
  try {
    part();
  } catch (...) {  // this span and those inside it never end: drop them (their seconds may be gone)
    s.spans_used = index;
    s.span_seconds.resize(index);
    throw;
  }
  s.select_device();
  span.record_stop(s.stream.handle());
  s.last_stop = index;
}

void CudaStepKernels::settle_times() {
  State& s = *state_;
  if (s.spans_used == 0) return;
  s.select_device();
  // The stop recorded last (an outer span's, with nesting) is the latest in the stream.
  check_cuda(cudaEventSynchronize(s.spans[s.last_stop]->stop()), "cudaEventSynchronize(the step's timers)");
  count_host_wait();
  for (std::size_t i = 0; i < s.spans_used; ++i) *s.span_seconds[i] += s.spans[i]->elapsed_s();
  discard_times();
}

void CudaStepKernels::discard_times() {
  state_->spans_used = 0;
  state_->span_seconds.clear();
}

}  // namespace burst::rt
