// probe_gpus() with the CUDA runtime: cudaGetDeviceCount, whose error (no driver, driver too
// old for the toolkit, no device, CUDA_VISIBLE_DEVICES empty) becomes the reason.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "runtime/device/device.hpp"

namespace burst::rt {

GpuProbe probe_gpus() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    return {0, fmt::format("cudaGetDeviceCount: {} ({})", cudaGetErrorString(status), static_cast<int>(status))};
  }
  if (count == 0) return {0, "cudaGetDeviceCount found no device"};
  return {count, ""};
}

}  // namespace burst::rt
