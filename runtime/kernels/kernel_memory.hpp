// The memory the attention kernels compute in, and the few element operations the ring
// executor does on it between kernel calls.
//
// A ring pass keeps every block it holds (its own, those in flight, the travelling gradient
// accumulators) where the kernels read them: host memory for the CPU kernels, device memory for
// the CUDA kernels. Blocks stay in their wire format (bf16 or fp32 parts, wire_format.hpp), so a
// received block is computed with in place and forwarded as the same bytes, with no
// re-encoding; NCCL moves them device to device. The executor's inputs and outputs are tensors
// in this memory too (the training step's), so between kernel calls it needs only:
//   copy_rows   rows of bytes from this memory to this memory, each side at its own pitch: a
//               ring payload assembled from its tensors, the Ulysses head scatter and gather
//   zero        clear bytes (a partial accumulator before a step)
//   fill        set fp32 values to one value (the forward's lse starts at -inf)
//   accumulate  sum[i] += element i of a buffer of a dtype (an arriving accumulator, bf16 or fp32)
//   convert     fp32 -> a dtype in this memory (a partial accumulator before it is sent, an
//               output in the activation dtype)
// and, off the hot path (tests, --attention-only's random inputs, offloaded state):
//   store       host fp32 values -> n elements of a dtype in this memory (bf16: rounded to
//               nearest even)
//   load        n elements of a dtype in this memory -> host fp32
// A device memory counts its store and load bytes, the waits they cost and the allocations its
// pool could not serve (device_traffic.hpp): a training step's counters after its first step
// say that nothing of it crossed to the host.
// HostKernelMemory does them with loops over host memory, and the CPU tests run the whole ring
// through it; the CUDA backend does them with small kernels (runtime/cuda/device_kernel_memory).
//
// Ordering. The operations and the kernels' calls run in one order, the kernels' own (on the GPU:
// one stream). store and load have completed when they return (host memory is involved); the
// others, like the kernels, may still run when they return, so a pass's host work overlaps the
// device's. Whatever moves a block must be ordered after what wrote it: the NCCL transport makes
// each group wait on the kernels' stream, and the loopback's GPU copy waits for an event of the
// sender's stream. A received block is written, in the kernels' order, by the time its receive
// completes, so work queued after that reads it. Freeing a block is ordered after the work queued
// before it (and, on the GPU loopback, after the copy that read it).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "common/error.hpp"
#include "runtime/comm/dtype.hpp"

namespace burst::rt {

enum class MemorySpace : std::uint8_t { Host, Device };

// How an allocation is freed: its owner's function, with the owner's context (the GPU's frees
// are ordered on the kernels' stream).
struct MemoryFree {
  void (*free)(std::byte* data, void* context) = nullptr;
  void* context = nullptr;
  void operator()(std::byte* data) const {
    if (data != nullptr) free(data, context);
  }
};

// An allocation in some memory, freed by its owner's function.
class MemoryBlock {
 public:
  using Free = MemoryFree;
  MemoryBlock() = default;
  MemoryBlock(std::byte* data, std::size_t bytes, Free free) : data_(data, free), bytes_(bytes) {}

  [[nodiscard]] std::byte* data() const { return data_.get(); }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }
  [[nodiscard]] float* floats() const {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): fp32 storage
    return reinterpret_cast<float*>(data_.get());
  }
  [[nodiscard]] std::span<std::byte> span() const { return {data_.get(), bytes_}; }

 private:
  std::unique_ptr<std::byte, Free> data_;
  std::size_t bytes_ = 0;
};

// allocate() found the memory exhausted (a GPU out of memory, the host's new failing): a
// burst::Error saying how much was asked for, which the training step turns into one naming
// the plan's memory item it was for and the plan's prediction of that item (step_buffer.hpp).
class OutOfKernelMemory : public Error {
 public:
  OutOfKernelMemory(MemorySpace space, std::size_t bytes, std::string_view detail);
  [[nodiscard]] MemorySpace space() const { return space_; }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

 private:
  MemorySpace space_;
  std::size_t bytes_;
};

// What a GPU's memory held: its pool's peak and the whole device's use, seen by CUDA.
struct DeviceMemoryUse {
  std::uint64_t pool_peak_bytes = 0;    // the most this memory's pool had handed out at once
  std::uint64_t device_used_bytes = 0;  // the device's total minus its free memory, now
  std::uint64_t device_total_bytes = 0;
};

class KernelMemory {
 public:
  virtual ~KernelMemory() = default;
  [[nodiscard]] virtual MemorySpace space() const = 0;
  // `bytes` of this memory, aligned for any element type; contents unspecified. Throws
  // OutOfKernelMemory when the memory is exhausted.
  [[nodiscard]] virtual MemoryBlock allocate(std::size_t bytes) = 0;
  // A GPU memory's use (null for host memory).
  [[nodiscard]] virtual std::optional<DeviceMemoryUse> device_use() const { return std::nullopt; }
  virtual void store(std::span<const float> values, DType dtype, std::byte* dst) = 0;
  virtual void load(const std::byte* src, DType dtype, std::span<float> values) = 0;
  virtual void zero(std::byte* dst, std::size_t bytes) = 0;
  virtual void fill(float* dst, float value, std::size_t count) = 0;
  virtual void accumulate(float* sum, const std::byte* src, DType dtype, std::size_t count) = 0;
  virtual void convert(const float* src, DType dtype, std::byte* dst, std::size_t count) = 0;
  // `rows` runs of `row_bytes` from `src` (runs `src_pitch` bytes apart) to `dst` (`dst_pitch`
  // apart), both in this memory; the two may not overlap.
  virtual void copy_rows(std::byte* dst, std::size_t dst_pitch, const std::byte* src, std::size_t src_pitch,
                         std::size_t row_bytes, std::size_t rows) = 0;
  // Returns once every operation queued on this memory, and every kernel queued before it, has
  // completed (a timed phase's end); host memory has nothing to wait for.
  virtual void wait() {}
  // `bytes` from `src` to `dst`, both in this memory.
  void copy(std::byte* dst, const std::byte* src, std::size_t bytes) { copy_rows(dst, bytes, src, bytes, bytes, 1); }
};

// Host memory and plain loops; dtypes fp32 and bf16 (others: burst::Error naming the call).
class HostKernelMemory final : public KernelMemory {
 public:
  [[nodiscard]] MemorySpace space() const override { return MemorySpace::Host; }
  [[nodiscard]] MemoryBlock allocate(std::size_t bytes) override;
  void store(std::span<const float> values, DType dtype, std::byte* dst) override;
  void load(const std::byte* src, DType dtype, std::span<float> values) override;
  void zero(std::byte* dst, std::size_t bytes) override;
  void fill(float* dst, float value, std::size_t count) override;
  void accumulate(float* sum, const std::byte* src, DType dtype, std::size_t count) override;
  void convert(const float* src, DType dtype, std::byte* dst, std::size_t count) override;
  void copy_rows(std::byte* dst, std::size_t dst_pitch, const std::byte* src, std::size_t src_pitch,
                 std::size_t row_bytes, std::size_t rows) override;
};

// Throws burst::Error naming `call` unless `dtype` is fp32 or bf16 (what tensors are stored as).
void require_tensor_dtype(DType dtype, const char* call);

}  // namespace burst::rt
