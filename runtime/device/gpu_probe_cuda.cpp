// probe_gpus() of a CUDA build: the CUDA backend's device count, with its reason when none.
#include "runtime/cuda/device_count.hpp"
#include "runtime/device/device.hpp"

namespace burst::rt {

GpuProbe probe_gpus() {
  const gpu::CudaDeviceCount devices = gpu::cuda_device_count();
  return {devices.count, devices.reason};
}

}  // namespace burst::rt
