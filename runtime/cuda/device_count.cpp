// cuda_device_count (see device_count.hpp).
#include "runtime/cuda/device_count.hpp"

#include <map>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/cuda/cuda_check.hpp"

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

void require_cuda_device(int device) {
  const CudaDeviceCount visible = cuda_device_count();
  if (visible.count == 0) {
    throw Error(Problem{"cuda", fmt::format("no CUDA device visible ({})", visible.reason), "", ""});
  }
  if (device < 0 || device >= visible.count) {
    throw Error(Problem{"cuda", fmt::format("device {} asked for, {} visible", device, visible.count),
                        fmt::format("0 .. {}", visible.count - 1), "check CUDA_VISIBLE_DEVICES"});
  }
}

DeviceArch current_device_arch() {
  thread_local std::map<int, DeviceArch> known;
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  const auto found = known.find(device);
  if (found != known.end()) return found->second;
  DeviceArch arch;
  check_cuda(cudaDeviceGetAttribute(&arch.major, cudaDevAttrComputeCapabilityMajor, device),
             "cudaDeviceGetAttribute(ComputeCapabilityMajor)");
  check_cuda(cudaDeviceGetAttribute(&arch.minor, cudaDevAttrComputeCapabilityMinor, device),
             "cudaDeviceGetAttribute(ComputeCapabilityMinor)");
  known.emplace(device, arch);
  return arch;
}

}  // namespace burst::rt::gpu
