// PinnedHostMemory: HostKernelMemory's operations on memory from cudaHostAlloc (see the header).
#include "runtime/cuda/pinned_host_memory.hpp"

#include <algorithm>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "runtime/cuda/cuda_check.hpp"
#include "runtime/kernels/device_traffic.hpp"

namespace burst::rt::gpu {
namespace {

void free_pinned(std::byte* data, void*) { (void)cudaFreeHost(data); }  // no throwing from a free

class PinnedHostMemory final : public KernelMemory {
 public:
  [[nodiscard]] MemorySpace space() const override { return MemorySpace::Host; }
  [[nodiscard]] MemoryBlock allocate(std::size_t bytes) override {
    void* data = nullptr;
    const cudaError_t status = cudaHostAlloc(&data, std::max<std::size_t>(bytes, 1), cudaHostAllocPortable);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw OutOfKernelMemory(MemorySpace::Host, bytes, "cudaHostAlloc (page-locked host memory)");
    }
    check_cuda(status, fmt::format("cudaHostAlloc({} bytes)", bytes));
    count_driver_allocation();
    return {static_cast<std::byte*>(data), bytes, {free_pinned, nullptr}};
  }
  void store(std::span<const float> values, DType dtype, std::byte* dst) override { host_.store(values, dtype, dst); }
  void load(const std::byte* src, DType dtype, std::span<float> values) override { host_.load(src, dtype, values); }
  void zero(std::byte* dst, std::size_t bytes) override { host_.zero(dst, bytes); }
  void fill(float* dst, float value, std::size_t count) override { host_.fill(dst, value, count); }
  void accumulate(float* sum, const std::byte* src, DType dtype, std::size_t count) override {
    host_.accumulate(sum, src, dtype, count);
  }
  void convert(const float* src, DType dtype, std::byte* dst, std::size_t count) override {
    host_.convert(src, dtype, dst, count);
  }
  void copy_rows(std::byte* dst, std::size_t dst_pitch, const std::byte* src, std::size_t src_pitch,
                 std::size_t row_bytes, std::size_t rows) override {
    host_.copy_rows(dst, dst_pitch, src, src_pitch, row_bytes, rows);
  }

 private:
  HostKernelMemory host_;  // the operations: host memory either way
};

}  // namespace

std::unique_ptr<KernelMemory> make_pinned_host_memory() { return std::make_unique<PinnedHostMemory>(); }

}  // namespace burst::rt::gpu
