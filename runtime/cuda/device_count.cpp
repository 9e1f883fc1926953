// cuda_device_count (see device_count.hpp).
#include "runtime/cuda/device_count.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

namespace burst::rt::gpu {

CudaDeviceCount cuda_device_count() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    return {0, fmt::format("cudaGetDeviceCount: {} ({})", cudaGetErrorString(status), cudaGetErrorName(status))};
  }
  if (count == 0) return {0, "cudaGetDeviceCount found no device"};
  return {count, ""};
}

}  // namespace burst::rt::gpu
