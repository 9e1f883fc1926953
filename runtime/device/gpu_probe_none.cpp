// probe_gpus() of a build without CUDA: never a GPU, and the reason says how to get one.
#include "runtime/device/device.hpp"

namespace burst::rt {

GpuProbe probe_gpus() {
  return {0, "this burst was built without CUDA; rebuild with the CUDA toolkit installed (BURST_WITH_CUDA=AUTO or ON)"};
}

std::optional<GpuInventory> gpu_inventory() { return std::nullopt; }

}  // namespace burst::rt
