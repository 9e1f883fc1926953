// This machine's GPUs as `--topology local` builds them (topologies/presets.hpp LocalGpus): CUDA's
// count, name, PCI address and memory (runtime/device gpu_inventory), the GPU table's model
// (by PCI device id, else by name: gpu_calibration.hpp), PCIe gen5 x16 on compute capability 9
// and later, gen4 x16 before, and, where GPUs 0 and 1 reach each other with native atomics, the
// NVLink bandwidth of the preset with that model (HGX: 450 GB/s on H100 and H200, 300 on A100)
// or 4 links of its generation.
#pragma once

#include <optional>

#include "topologies/presets.hpp"

namespace burst::cli {

// Nullopt where no GPU is visible; throws burst::Error for a GPU the table does not know.
[[nodiscard]] std::optional<topo::LocalGpus> probe_local_gpus();

}  // namespace burst::cli
