// The memory the attention kernels compute in, and the few element operations the ring
// executor does on it between kernel calls.
//
// A ring pass keeps every block it holds (its own, those in flight, the travelling gradient
// accumulators) where the kernels read them: host memory for the CPU kernels, device memory for
// the CUDA kernels. Blocks stay in their wire format (bf16 or fp32 parts, wire_format.hpp), so a
// received block is computed with in place and forwarded as the same bytes, with no
// re-encoding; NCCL moves them device to device. Between kernel calls the pass needs only:
//   store       host fp32 values -> n elements of a dtype in this memory (bf16: rounded to
//               nearest even): this rank's own blocks, once per pass
//   load        n elements of a dtype in this memory -> host fp32: the pass's results, once
//   zero        clear bytes (a partial accumulator before a step)
//   accumulate  sum[i] += element i of a buffer of a dtype (an arriving accumulator, bf16 or fp32)
//   convert     fp32 -> a dtype in this memory (a partial accumulator before it is sent)
// HostKernelMemory does them with loops over host memory, and the CPU tests run the whole ring
// through it; the CUDA backend does them with small kernels (runtime/cuda/device_kernel_memory).
//
// Every call has completed when it returns, kernels included: a buffer handed to a send is
// ready, and a received buffer may be used once its receive is waited for.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "runtime/comm/dtype.hpp"

namespace burst::rt {

enum class MemorySpace : std::uint8_t { Host, Device };

// An allocation in some memory, freed by its owner's deleter.
class MemoryBlock {
 public:
  using Deleter = void (*)(std::byte*);
  MemoryBlock() = default;
  MemoryBlock(std::byte* data, std::size_t bytes, Deleter free) : data_(data, free), bytes_(bytes) {}

  [[nodiscard]] std::byte* data() const { return data_.get(); }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }
  [[nodiscard]] float* floats() const { return reinterpret_cast<float*>(data_.get()); }  // NOLINT: fp32 storage
  [[nodiscard]] std::span<std::byte> span() const { return {data_.get(), bytes_}; }

 private:
  std::unique_ptr<std::byte, Deleter> data_{nullptr, nullptr};
  std::size_t bytes_ = 0;
};

class KernelMemory {
 public:
  virtual ~KernelMemory() = default;
  [[nodiscard]] virtual MemorySpace space() const = 0;
  // `bytes` of this memory, aligned for any element type; contents unspecified.
  [[nodiscard]] virtual MemoryBlock allocate(std::size_t bytes) = 0;
  virtual void store(std::span<const float> values, DType dtype, std::byte* dst) = 0;
  virtual void load(const std::byte* src, DType dtype, std::span<float> values) = 0;
  virtual void zero(std::byte* dst, std::size_t bytes) = 0;
  virtual void accumulate(float* sum, const std::byte* src, DType dtype, std::size_t count) = 0;
  virtual void convert(const float* src, DType dtype, std::byte* dst, std::size_t count) = 0;
};

// Host memory and plain loops; dtypes fp32 and bf16 (others: burst::Error naming the call).
class HostKernelMemory final : public KernelMemory {
 public:
  [[nodiscard]] MemorySpace space() const override { return MemorySpace::Host; }
  [[nodiscard]] MemoryBlock allocate(std::size_t bytes) override;
  void store(std::span<const float> values, DType dtype, std::byte* dst) override;
  void load(const std::byte* src, DType dtype, std::span<float> values) override;
  void zero(std::byte* dst, std::size_t bytes) override;
  void accumulate(float* sum, const std::byte* src, DType dtype, std::size_t count) override;
  void convert(const float* src, DType dtype, std::byte* dst, std::size_t count) override;
};

// Throws burst::Error naming `call` unless `dtype` is fp32 or bf16 (what tensors are stored as).
void require_tensor_dtype(DType dtype, const char* call);

}  // namespace burst::rt
