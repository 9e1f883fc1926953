// StepKernels that store what the GPU step stores, as the GPU step stores it, in host memory:
// activations, their gradients and the bound parameters as bf16, statistics, logits and
// parameter gradients as fp32, dl beside the logits in bf16; model state kept in its memory
// as the GPU keeps it (a bf16 working copy beside fp32 master weights, zero_model.hpp). Each operation reads its bf16
// inputs as fp32, runs the CPU op (layer_ops.hpp, the host cross-entropy) and rounds its
// outputs to bf16 (round to nearest even, common/bf16.hpp), as the CUDA kernels' fp32 math
// with bf16 loads and stores does.
//
// So the CPU tests run the training step's GPU data flow: which buffer gets which dtype, the
// bf16 uploads of each unit, the attention reading bf16 Q, K, V and writing bf16 O, dQ, dK, dV
// in place, the LM head's separate bf16 dl, gradients bound and returned.
// Only the kernels themselves differ from the GPU (tests/gpu/ compares those one by one).
//
// Its memory (EmulatedDeviceMemory) is host memory that calls itself device memory, so every
// transfer goes through load and store as on the GPU and is counted as the GPU counts it
// (device_traffic.hpp); it keeps freed blocks for reuse as the GPU's stream-ordered pool does,
// counting an allocation it could not serve from them as one from the driver; and it can be
// given a budget: an allocation past it throws OutOfKernelMemory as a full GPU does.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/bf16.hpp"
#include "runtime/kernels/device_traffic.hpp"
#include "runtime/training/detail/layer_ops.hpp"
#include "runtime/training/model.hpp"
#include "runtime/training/step_kernels.hpp"

namespace burst::test {

class EmulatedDeviceMemory final : public rt::KernelMemory {
 public:
  explicit EmulatedDeviceMemory(std::size_t budget) : budget_(budget) {}
  EmulatedDeviceMemory(const EmulatedDeviceMemory&) = delete;
  EmulatedDeviceMemory& operator=(const EmulatedDeviceMemory&) = delete;
  ~EmulatedDeviceMemory() override {
    for (const auto& [bytes, data] : cached_) ::operator delete[](data, kAlignment);
  }

  [[nodiscard]] rt::MemorySpace space() const override { return rt::MemorySpace::Device; }
  // From the pool when it holds a freed block of this size (as a stream-ordered pool that keeps
  // what is freed serves a step that repeats its shapes), else from "the driver", counted.
  [[nodiscard]] rt::MemoryBlock allocate(std::size_t bytes) override {
    if (bytes > budget_ - used_) throw rt::OutOfKernelMemory(rt::MemorySpace::Device, bytes, "the test's budget");
    std::byte* data = nullptr;
    if (const auto cached = cached_.find(bytes); cached != cached_.end()) {
      data = cached->second;
      cached_.erase(cached);
    } else {
      data = static_cast<std::byte*>(::operator new[](std::max<std::size_t>(bytes, 1), kAlignment));
      rt::count_driver_allocation();
    }
    used_ += bytes;
    sizes_[data] = bytes;
    const std::lock_guard lock(live_mutex());
    live()[data] = bytes;
    return {data, bytes, {release, this}};
  }
  // Whether `p` lies in memory some EmulatedDeviceMemory handed out and has not taken back: what
  // a test's stand-in for a GPU transport checks every buffer against.
  [[nodiscard]] static bool holds(const void* p) {
    const auto* b = static_cast<const std::byte*>(p);
    const std::lock_guard lock(live_mutex());
    const auto after = live().upper_bound(b);
    return after != live().begin() && b < std::prev(after)->first + std::prev(after)->second;
  }
  // Transfers to and from the host, counted as the GPU's are (device_traffic.hpp).
  void store(std::span<const float> values, rt::DType dtype, std::byte* dst) override {
    rt::count_host_to_device(values.size() * rt::dtype_size(dtype));
    host_.store(values, dtype, dst);
  }
  void load(const std::byte* src, rt::DType dtype, std::span<float> values) override {
    rt::count_device_to_host(values.size() * rt::dtype_size(dtype));
    rt::count_host_wait();
    host_.load(src, dtype, values);
  }
  void zero(std::byte* dst, std::size_t bytes) override { host_.zero(dst, bytes); }
  void fill(float* dst, float value, std::size_t count) override { host_.fill(dst, value, count); }
  void accumulate(float* sum, const std::byte* src, rt::DType dtype, std::size_t count) override {
    host_.accumulate(sum, src, dtype, count);
  }
  void convert(const float* src, rt::DType dtype, std::byte* dst, std::size_t count) override {
    host_.convert(src, dtype, dst, count);
  }
  void copy_rows(std::byte* dst, std::size_t dst_pitch, const std::byte* src, std::size_t src_pitch,
                 std::size_t row_bytes, std::size_t rows) override {
    host_.copy_rows(dst, dst_pitch, src, src_pitch, row_bytes, rows);
  }
  // The emulated kernels' own reads and writes (what a GPU kernel does in device memory): not
  // transfers, so not counted.
  [[nodiscard]] rt::KernelMemory& kernel_access() { return host_; }

 private:
  static constexpr std::align_val_t kAlignment{64};
  static std::map<const std::byte*, std::size_t>& live() {
    static std::map<const std::byte*, std::size_t> blocks;  // every instance's, across threads
    return blocks;
  }
  static std::mutex& live_mutex() {
    static std::mutex m;
    return m;
  }
  static void release(std::byte* data, void* context) {
    auto* self = static_cast<EmulatedDeviceMemory*>(context);
    const std::size_t bytes = self->sizes_.at(data);
    self->used_ -= bytes;
    self->sizes_.erase(data);
    {
      const std::lock_guard lock(live_mutex());
      live().erase(data);
    }
    self->cached_.emplace(bytes, data);  // kept for the next allocation of its size
  }

  std::size_t budget_;
  std::size_t used_ = 0;
  std::map<const std::byte*, std::size_t> sizes_;
  std::multimap<std::size_t, std::byte*> cached_;  // freed blocks by size: the pool
  rt::HostKernelMemory host_;
};

class Bf16StepKernels final : public rt::StepKernels {
 public:
  explicit Bf16StepKernels(std::size_t budget = SIZE_MAX) : memory_(budget) {}
  [[nodiscard]] std::string_view device() const override { return "cpu-bf16"; }
  [[nodiscard]] rt::KernelMemory& memory() override { return memory_; }
  [[nodiscard]] rt::DType activation_dtype() const override { return rt::DType::BF16; }
  void set_positions(std::span<const std::int64_t> positions) override { positions_ = positions; }

  // Device state is read and accumulated in place; host state is uploaded (bf16) and returned.
  [[nodiscard]] rt::BoundTensor bind_params(rt::StepTensor params) override {
    if (params.space == rt::MemorySpace::Device) {
      expect(params.dtype == rt::DType::BF16, "bind_params: device parameters are bf16");
      return {params, {}};
    }
    rt::MemoryBlock block = memory_.allocate(params.count * sizeof(Bf16));
    memory_.store(fp32(params), rt::DType::BF16, block.data());
    return {{block.data(), params.count, rt::DType::BF16, rt::MemorySpace::Device}, std::move(block)};
  }
  [[nodiscard]] rt::BoundTensor bind_gradients(rt::StepTensor grads) override {
    if (grads.space == rt::MemorySpace::Device) return {grads, {}};
    rt::MemoryBlock block = memory_.allocate(grads.count * sizeof(float));
    memory_.zero(block.data(), block.bytes());
    return {{block.data(), grads.count, rt::DType::F32, rt::MemorySpace::Device}, std::move(block)};
  }
  void return_gradients(const rt::BoundTensor& bound, rt::StepTensor grads) override {
    if (bound.tensor.data != grads.data) memory_.load(bound.tensor.data, rt::DType::F32, fp32(grads));
  }
  [[nodiscard]] double squared_norm(rt::StepTensor grads) override { return rt::squared_norm(fp32(grads)); }
  // The CPU's update of the fp32 master weights, then the working copy rounded from them.
  void adamw_update(const rt::AdamWTensors& range, std::span<const rt::ParamGroup> groups, double norm,
                    std::int64_t step, const rt::AdamWConfig& config) override {
    expect(range.working.count == range.master.count, "adamw_update: working copy and master differ in size");
    rt::adamw_update({range.offset, fp32(range.master), fp32(range.grads), fp32(range.m), fp32(range.v)}, groups, norm,
                     step, config);
    write(fp32(range.master), range.working);
  }

  void linear_forward(rt::StepTensor x, std::int64_t rows, std::int64_t in, rt::StepTensor w, std::int64_t out,
                      rt::StepTensor y) override {
    std::vector<float> result(y.count);
    rt::linear_forward(read(x), rows, in, read(w), out, result);
    write(result, y);
  }
  void linear_backward(rt::StepTensor x, std::int64_t rows, std::int64_t in, rt::StepTensor w, std::int64_t out,
                       rt::StepTensor dy, rt::StepTensor dx, rt::StepTensor dw, bool accumulate_dx) override {
    std::vector<float> dx_values = accumulate_dx ? read(dx) : std::vector<float>(dx.count);
    rt::linear_backward(read(x), rows, in, read(w), out, read(dy), dx_values, fp32(dw), accumulate_dx);
    write(dx_values, dx);
  }
  void rms_norm_forward(rt::StepTensor x, rt::StepTensor gain, std::int64_t rows, std::int64_t dim, rt::StepTensor y,
                        rt::StepTensor inv_rms) override {
    std::vector<float> result(y.count);
    rt::rms_norm_forward(read(x), read(gain), rows, dim, rt::kNormEps, result, fp32(inv_rms));
    write(result, y);
  }
  void rms_norm_backward(rt::StepTensor x, rt::StepTensor gain, rt::StepTensor inv_rms, rt::StepTensor dy,
                         std::int64_t rows, std::int64_t dim, rt::StepTensor skip, rt::StepTensor dx,
                         rt::StepTensor dgain) override {
    std::vector<float> result(dx.count);
    rt::rms_norm_backward(read(x), read(gain), fp32(inv_rms), read(dy), rows, dim, result, fp32(dgain));
    if (skip.count > 0) {
      const std::vector<float> through = read(skip);
      for (std::size_t i = 0; i < result.size(); ++i) result[i] += through[i];
    }
    write(result, dx);
  }
  void rope(rt::StepTensor q, std::int64_t heads, rt::StepTensor k, std::int64_t kv_heads, std::int64_t head_dim,
            float base, bool backward) override {
    for (const auto& [x, x_heads] : {std::pair{q, heads}, std::pair{k, kv_heads}}) {
      std::vector<float> values = read(x);
      const rt::View view{values.data(), {static_cast<std::int64_t>(positions_.size()), x_heads, head_dim}};
      (backward ? rt::rope_backward : rt::rope_forward)(view, positions_, base);
      write(values, x);
    }
  }
  void swiglu_forward(rt::StepTensor u, rt::StepTensor w, rt::StepTensor m) override {
    std::vector<float> result(m.count);
    rt::swiglu_forward(read(u), read(w), result);
    write(result, m);
  }
  void swiglu_backward(rt::StepTensor u, rt::StepTensor w, rt::StepTensor dm, rt::StepTensor du,
                       rt::StepTensor dw) override {
    std::vector<float> du_values(du.count), dw_values(dw.count);
    rt::swiglu_backward(read(u), read(w), read(dm), du_values, dw_values);
    write(du_values, du);
    write(dw_values, dw);
  }
  void residual_add(rt::StepTensor a, rt::StepTensor b, rt::StepTensor out) override {
    std::vector<float> sum = read(a);
    const std::vector<float> other = read(b);
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += other[i];
    write(sum, out);
  }
  void copy(rt::StepTensor src, rt::StepTensor dst) override { std::memcpy(dst.data, src.data, src.bytes()); }
  void embedding_forward(std::span<const std::int32_t> tokens, rt::StepTensor table, std::int64_t vocab,
                         std::int64_t dim, rt::StepTensor out) override {
    std::vector<float> result(out.count);
    rt::embedding_forward(tokens, read(table), vocab, dim, result);
    write(result, out);
  }
  void embedding_backward(std::span<const std::int32_t> tokens, rt::StepTensor dout, std::int64_t vocab,
                          std::int64_t dim, rt::StepTensor dtable) override {
    rt::embedding_backward(tokens, read(dout), vocab, dim, fp32(dtable));
  }
  [[nodiscard]] rt::LmHeadForward cross_entropy_loss(rt::StepTensor logits, std::int64_t rows, std::int64_t vocab,
                                                     std::span<const std::int32_t> targets) override {
    return host_.cross_entropy_loss(logits, rows, vocab, targets);
  }
  void cross_entropy_backward(rt::StepTensor logits, std::int64_t rows, std::int64_t vocab,
                              std::span<const std::int32_t> targets, double scale, rt::StepTensor dl) override {
    std::vector<float> result(dl.count);
    host_.cross_entropy_backward(logits, rows, vocab, targets, scale, rt::host_tensor(std::span<float>(result)));
    write(result, dl);
  }
  void time_span(const std::function<void()>& part, double& seconds) override { host_.time_span(part, seconds); }

 private:
  [[nodiscard]] std::vector<float> read(rt::StepTensor t) {
    std::vector<float> values(t.count);
    memory_.kernel_access().load(t.data, t.dtype, values);
    return values;
  }
  void write(std::span<const float> values, rt::StepTensor t) {
    memory_.kernel_access().store(values, t.dtype, t.data);
  }
  // These kernels run on a loopback job's rank threads, where Catch's assertions must not be
  // used (Catch is not thread-safe; ThreadSanitizer shows their races): a broken expectation
  // throws, the job fails the rank, and the test's thread reports it.
  static void expect(bool holds, const char* what) {
    if (!holds) throw std::logic_error(std::string("Bf16StepKernels: ") + what);
  }
  // An fp32 tensor's floats, written in place (statistics and parameter gradients).
  [[nodiscard]] static std::span<float> fp32(rt::StepTensor t) {
    expect(t.dtype == rt::DType::F32, "fp32: a tensor of another dtype");
    return {reinterpret_cast<float*>(t.data),
            t.count};  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): fp32 storage
  }

  EmulatedDeviceMemory memory_;
  rt::HostStepKernels host_;  // the cross-entropy of fp32 logits
  std::span<const std::int64_t> positions_;
};

}  // namespace burst::test
