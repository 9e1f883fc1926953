// KernelMemory (runtime/kernels/kernel_memory.hpp) in a GPU's memory: where the ring executor
// keeps its blocks when the CUDA kernels compute, so blocks travel GPU to GPU (NCCL) and the
// kernels read them in place.
//
// Every operation runs on the kernels' stream and has completed when it returns (the stream is
// synchronised), so a block handed to a send is ready and a buffer may be freed or reused at
// once. The element operations are grid-stride kernels (accumulate, convert); store and load
// convert to or from bf16 on the host around one copy each way.
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
  // `device` and `stream` stay the caller's (CudaAttentionKernels owns them).
  DeviceKernelMemory(int device, cudaStream_t stream) : device_(device), stream_(stream) {}

  [[nodiscard]] MemorySpace space() const override { return MemorySpace::Device; }
  [[nodiscard]] MemoryBlock allocate(std::size_t bytes) override;
  void store(std::span<const float> values, DType dtype, std::byte* dst) override;
  void load(const std::byte* src, DType dtype, std::span<float> values) override;
  void zero(std::byte* dst, std::size_t bytes) override;
  void accumulate(float* sum, const std::byte* src, DType dtype, std::size_t count) override;
  void convert(const float* src, DType dtype, std::byte* dst, std::size_t count) override;

 private:
  void synchronize(const char* after) const;

  int device_;
  cudaStream_t stream_;
  std::vector<Bf16> staging_;  // bf16 values on their way to or from the device
};

}  // namespace burst::rt::gpu
