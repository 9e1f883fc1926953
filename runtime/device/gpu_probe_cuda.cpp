// probe_gpus() of a CUDA build: the CUDA backend's device count, with its reason when none.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/device_count.hpp"
#include "runtime/device/device.hpp"

namespace burst::rt {

GpuProbe probe_gpus() {
  const gpu::CudaDeviceCount devices = gpu::cuda_device_count();
  return {devices.count, devices.reason};
}

std::optional<GpuInventory> gpu_inventory() {
  const gpu::CudaDeviceCount devices = gpu::cuda_device_count();
  if (devices.count == 0) return std::nullopt;
  cudaDeviceProp prop{};
  gpu::check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties(0)");
  GpuInventory out;
  out.count = devices.count;
  out.cuda_name = prop.name;
  out.pci_bus_id = fmt::format("{:04x}:{:02x}:{:02x}.0", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
  out.memory_bytes = static_cast<double>(prop.totalGlobalMem);
  out.sm = prop.major * 10 + prop.minor;
  if (devices.count > 1) {
    int atomics = 0;
    gpu::check_cuda(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, 0, 1),
                    "cudaDeviceGetP2PAttribute(native atomics, 0, 1)");
    out.nvlink = atomics != 0;
  }
  return out;
}

}  // namespace burst::rt
