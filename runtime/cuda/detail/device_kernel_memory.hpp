// KernelMemory (runtime/kernels/kernel_memory.hpp) in a GPU's memory: where the ring executor
// keeps its blocks when the CUDA kernels compute, so blocks travel GPU to GPU (NCCL) and the
// kernels read them in place.
//
// Every operation runs on the kernels' stream, in order with the kernels. Blocks come from a
// stream-ordered pool of this object's own (cudaMallocFromPoolAsync, cudaFreeAsync on that
// stream): a block freed while a kernel still reads it goes back only after that kernel, and
// with the pool's release threshold at its maximum freed memory stays in the pool, so after
// the first pass a pass allocates nothing from the driver. The pool is private, so what it
// keeps (the ring's peak) is not withheld from other allocations of the process once this
// memory is gone. zero, fill, accumulate, convert and copy_rows return at once (grid-stride kernels,
// element_kernels.hpp; cudaMemcpy2DAsync device to device); store and load convert to or from
// bf16 on the host around one copy each way and synchronise the stream, as they read or fill
// host memory. Both count their bytes and their wait, and an allocation that made the pool
// reserve more from the driver counts one driver allocation (device_traffic.hpp).
//
// Not verified on a GPU (docs/runtime-cuda.md).
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "common/bf16.hpp"
#include "runtime/kernels/kernel_memory.hpp"

namespace burst::rt::gpu {

class DeviceKernelMemory final : public KernelMemory {
 public:
  // `device` and `stream` stay the caller's (CudaAttentionKernels owns them). Throws
  // burst::Error where the device has no stream-ordered pools.
  DeviceKernelMemory(int device, cudaStream_t stream);
  // Blocks still out are released with the pool once they are freed (CUDA defers it).
  ~DeviceKernelMemory() override;
  DeviceKernelMemory(const DeviceKernelMemory&) = delete;
  DeviceKernelMemory& operator=(const DeviceKernelMemory&) = delete;

  [[nodiscard]] MemorySpace space() const override { return MemorySpace::Device; }
  // Throws OutOfKernelMemory when the device cannot give `bytes`, even after every pool of the
  // process has given back what it keeps unused.
  [[nodiscard]] MemoryBlock allocate(std::size_t bytes) override;
  // The pool's high-water mark (cudaMemPoolAttrUsedMemHigh) and cudaMemGetInfo's view.
  [[nodiscard]] std::optional<DeviceMemoryUse> device_use() const override;
  void store(std::span<const float> values, DType dtype, std::byte* dst) override;
  void load(const std::byte* src, DType dtype, std::span<float> values) override;
  void zero(std::byte* dst, std::size_t bytes) override;
  void fill(float* dst, float value, std::size_t count) override;
  void accumulate(float* sum, const std::byte* src, DType dtype, std::size_t count) override;
  void convert(const float* src, DType dtype, std::byte* dst, std::size_t count) override;
  void copy_rows(std::byte* dst, std::size_t dst_pitch, const std::byte* src, std::size_t src_pitch,
                 std::size_t row_bytes, std::size_t rows) override;
  void wait() override { synchronize("waiting for the queued work"); }

 private:
  void synchronize(const char* after) const;

  int device_;
  cudaStream_t stream_;
  cudaMemPool_t pool_ = nullptr;
  std::uint64_t reserved_ = 0;  // what the pool held from the driver after the last allocation
  std::vector<Bf16> staging_;   // bf16 values on their way to or from the device
};

}  // namespace burst::rt::gpu
