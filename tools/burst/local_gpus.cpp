// This machine's GPUs for `--topology local` (see local_gpus.hpp).
#include "tools/burst/local_gpus.hpp"

#include <algorithm>

#include "runtime/device/device.hpp"
#include "tools/burst/gpu_calibration.hpp"
#include "topologies/hardware.hpp"

namespace burst::cli {

std::optional<topo::LocalGpus> probe_local_gpus() {
  const std::optional<rt::GpuInventory> inventory = rt::gpu_inventory();
  if (!inventory) return std::nullopt;
  const topo::hw::GpuModel& model = gpu_model_of(inventory->cuda_name, pci_device_of(inventory->pci_bus_id));
  topo::LocalGpus gpus;
  gpus.count = inventory->count;
  gpus.spec = model.spec;
  gpus.spec.memory_bytes = std::min(gpus.spec.memory_bytes, inventory->memory_bytes);  // what CUDA sees (MIG slices)
  gpus.pcie_Bps = topo::hw::pcie_Bps(inventory->sm >= 90 ? 32.0 : 16.0, 16);
  if (inventory->nvlink) {
    gpus.nvlink_Bps = 4 * topo::hw::nvlink_link_Bps(inventory->sm);
    for (const topo::GpuPreset& p : topo::gpu_presets()) {
      if (p.gpu_model == model.spec.model && p.nvlink_Bps > 0) gpus.nvlink_Bps = p.nvlink_Bps;
    }
  }
  return gpus;
}

}  // namespace burst::cli
