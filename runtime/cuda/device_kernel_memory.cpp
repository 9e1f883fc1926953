// DeviceKernelMemory (see device_kernel_memory.hpp): the host side; the element kernels are in
// element_kernels.cu.
#include "runtime/cuda/detail/device_kernel_memory.hpp"

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/detail/element_kernels.hpp"
#include "runtime/kernels/device_traffic.hpp"

namespace burst::rt::gpu {
namespace {

void free_on_stream(std::byte* p, void* stream) { (void)cudaFreeAsync(p, static_cast<cudaStream_t>(stream)); }

// Every pool of this process. Each keeps what it freed (release threshold at its maximum), so
// with several on one GPU (a loopback job: each rank's step and attention pools) one can hold
// free memory another needs: an allocation that fails trims them all and tries once more.
std::mutex pools_mutex;
std::set<cudaMemPool_t> live_pools;

// BURST_TRACE_POOL_GROWTH=1: every growth of a pool printed to stderr (docs/runtime-cuda.md), to
// find what makes a warm step go to the driver.
bool trace_growth() {
  static const bool on = [] {
    const char* v = std::getenv("BURST_TRACE_POOL_GROWTH");
    return v != nullptr && std::string_view(v) == "1";
  }();
  return on;
}

void trim_every_pool() {
  const std::lock_guard lock(pools_mutex);
  for (cudaMemPool_t pool : live_pools) (void)cudaMemPoolTrimTo(pool, 0);  // frees what no allocation holds
}

}  // namespace

DeviceKernelMemory::DeviceKernelMemory(int device, cudaStream_t stream) : device_(device), stream_(stream) {
  check_cuda(cudaSetDevice(device_), fmt::format("cudaSetDevice({})", device_));
  int pools = 0;
  check_cuda(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device_),
             "cudaDeviceGetAttribute(cudaDevAttrMemoryPoolsSupported)");
  if (pools == 0) {
    throw Error(Problem{"cuda", fmt::format("device {} has no stream-ordered memory pools", device_),
                        "a GPU and driver with cudaMallocAsync (CUDA 11.2 and later)", ""});
  }
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device_;
  check_cuda(cudaMemPoolCreate(&pool_, &props), "cudaMemPoolCreate");
  std::uint64_t keep_all = UINT64_MAX;
  if (const cudaError_t set = cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep_all);
      set != cudaSuccess) {
    (void)cudaMemPoolDestroy(pool_);
    check_cuda(set, "cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold)");
  }
  const std::lock_guard lock(pools_mutex);
  live_pools.insert(pool_);
}

std::optional<DeviceMemoryUse> DeviceKernelMemory::device_use() const {
  DeviceMemoryUse use;
  check_cuda(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemHigh, &use.pool_peak_bytes),
             "cudaMemPoolGetAttribute(cudaMemPoolAttrUsedMemHigh)");
  check_cuda(cudaSetDevice(device_), fmt::format("cudaSetDevice({})", device_));
  std::size_t free = 0, total = 0;
  check_cuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  use.device_used_bytes = total - free;
  use.device_total_bytes = total;
  return use;
}

DeviceKernelMemory::~DeviceKernelMemory() {
  {
    const std::lock_guard lock(pools_mutex);
    live_pools.erase(pool_);
  }
  (void)cudaMemPoolDestroy(pool_);
}

void DeviceKernelMemory::synchronize(const char* after) const {
  count_host_wait();
  check_cuda(cudaStreamSynchronize(stream_), fmt::format("cudaStreamSynchronize (after {})", after));
}

MemoryBlock DeviceKernelMemory::allocate(std::size_t bytes) {
  check_cuda(cudaSetDevice(device_), fmt::format("cudaSetDevice({})", device_));
  void* p = nullptr;
  if (bytes > 0) {
    cudaError_t got = cudaMallocFromPoolAsync(&p, bytes, pool_, stream_);
    if (got == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      synchronize("an allocation the device could not give");  // this stream's frees are done
      trim_every_pool();
      got = cudaMallocFromPoolAsync(&p, bytes, pool_, stream_);
    }
    if (got == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // not a sticky error: the device stays usable
      throw OutOfKernelMemory(MemorySpace::Device, bytes, fmt::format("cudaMallocFromPoolAsync on device {}", device_));
    }
    check_cuda(got, fmt::format("cudaMallocFromPoolAsync({} bytes)", bytes));
    std::uint64_t reserved = 0;
    check_cuda(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &reserved),
               "cudaMemPoolGetAttribute(cudaMemPoolAttrReservedMemCurrent)");
    if (reserved > reserved_) {  // the pool grew: it went to the driver
      count_driver_allocation();
      if (trace_growth()) {
        std::uint64_t used = 0;
        (void)cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, &used);
        fmt::print(stderr, "burst: device {} pool {} grew {} -> {} bytes for {} bytes ({} in use)\n", device_,
                   static_cast<const void*>(pool_), reserved_, reserved, bytes, used);
      }
    }
    reserved_ = reserved;
  }
  return {static_cast<std::byte*>(p), bytes, {free_on_stream, stream_}};
}

void DeviceKernelMemory::store(std::span<const float> values, DType dtype, std::byte* dst) {
  require_tensor_dtype(dtype, "DeviceKernelMemory::store");
  if (values.empty()) return;
  const void* src = values.data();
  std::size_t bytes = values.size_bytes();
  if (dtype == DType::BF16) {
    staging_.resize(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) staging_[i] = to_bf16(values[i]);
    src = staging_.data();
    bytes = values.size() * sizeof(Bf16);
  }
  check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_),
             fmt::format("cudaMemcpyAsync(to the device, {} bytes)", bytes));
  count_host_to_device(bytes);
  synchronize("storing a tensor");  // the host source may change once this returns
}

void DeviceKernelMemory::load(const std::byte* src, DType dtype, std::span<float> values) {
  require_tensor_dtype(dtype, "DeviceKernelMemory::load");
  if (values.empty()) return;
  count_device_to_host(values.size() * dtype_size(dtype));
  if (dtype == DType::F32) {
    check_cuda(cudaMemcpyAsync(values.data(), src, values.size_bytes(), cudaMemcpyDeviceToHost, stream_),
               fmt::format("cudaMemcpyAsync(to the host, {} bytes)", values.size_bytes()));
    return synchronize("loading a tensor");
  }
  staging_.resize(values.size());
  check_cuda(cudaMemcpyAsync(staging_.data(), src, values.size() * sizeof(Bf16), cudaMemcpyDeviceToHost, stream_),
             fmt::format("cudaMemcpyAsync(to the host, {} bytes)", values.size() * sizeof(Bf16)));
  synchronize("loading a tensor");
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = to_float(staging_[i]);
}

void DeviceKernelMemory::zero(std::byte* dst, std::size_t bytes) {
  if (bytes == 0) return;
  check_cuda(cudaMemsetAsync(dst, 0, bytes, stream_), fmt::format("cudaMemsetAsync({} bytes)", bytes));
}

void DeviceKernelMemory::fill(float* dst, float value, std::size_t count) {
  fill_on_device(dst, value, count, stream_);
}

void DeviceKernelMemory::accumulate(float* sum, const std::byte* src, DType dtype, std::size_t count) {
  require_tensor_dtype(dtype, "DeviceKernelMemory::accumulate");
  if (count == 0) return;
  accumulate_on_device(sum, src, dtype == DType::BF16, count, stream_);
}

void DeviceKernelMemory::convert(const float* src, DType dtype, std::byte* dst, std::size_t count) {
  require_tensor_dtype(dtype, "DeviceKernelMemory::convert");
  if (count == 0) return;
  if (dtype == DType::F32) {
    check_cuda(cudaMemcpyAsync(dst, src, count * sizeof(float), cudaMemcpyDeviceToDevice, stream_),
               "cudaMemcpyAsync(device to device)");
  } else {
    to_bf16_on_device(src, dst, count, stream_);
  }
}

void DeviceKernelMemory::copy_rows(std::byte* dst, std::size_t dst_pitch, const std::byte* src, std::size_t src_pitch,
                                   std::size_t row_bytes, std::size_t rows) {
  if (row_bytes == 0 || rows == 0) return;
  if (rows == 1 || (dst_pitch == row_bytes &&
                    src_pitch == row_bytes)) {  // contiguous: no pitch limit (2D copies cap it below 2 GiB)
    check_cuda(cudaMemcpyAsync(dst, src, rows * row_bytes, cudaMemcpyDeviceToDevice, stream_),
               fmt::format("cudaMemcpyAsync({} bytes, device to device)", rows * row_bytes));
    return;
  }
  check_cuda(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, row_bytes, rows, cudaMemcpyDeviceToDevice, stream_),
             fmt::format("cudaMemcpy2DAsync({} rows of {} bytes, device to device)", rows, row_bytes));
}

}  // namespace burst::rt::gpu
