// Built-in clusters by name, each `nodes` copies of one node joined by a rail-optimised,
// non-blocking InfiniBand fabric (2 us). The numbers and their sources are tabulated in
// docs/topology-presets.md.
//   a800-4hca  8x A800-SXM4-80GB, NVSwitch 200 GB/s, 4 HDR HCAs (2 GPUs each): BurstEngine's
//   dgx-a100   8x A100-SXM4-80GB, NVSwitch 300 GB/s, 8 HDR HCAs (1 per GPU)
//   dgx-a100-40g  the same with A100-SXM4-40GB (DGX A100 40GB; AWS p4d's GPUs)
//   dgx-h100   8x H100-SXM5-80GB, NVSwitch 450 GB/s, 8 NDR HCAs
//   h200       8x H200-SXM-141GB, NVSwitch 450 GB/s, 8 NDR HCAs
//   h800       8x H800-SXM5-80GB, NVSwitch 200 GB/s, 8 NDR HCAs
//   pcie-8gpu  8x A100-PCIE-80GB, no NVLink: 2 sockets x 2 PCIe switches x 2 GPUs, 1 HDR NIC per socket
//   local      this machine: CPU ranks over MPI (see local_calibration.hpp), or, given the GPUs the
//              machine has (LocalGpus: the CLI probes CUDA), ranks on those GPUs
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "topologies/topology.hpp"

namespace burst::topo {

struct PresetInfo {
  std::string name;
  std::string description;  // one line, for `burst topo list`
};

[[nodiscard]] const std::vector<PresetInfo>& presets();

// Every preset but `local`, with its GPU model and whether its GPUs share an NVSwitch plane:
// what the NCCL XML importer needs to name the presets that fit a file's GPUs.
struct GpuPreset {
  std::string name;
  std::string gpu_model;
  bool nvswitch = false;
  double nvlink_Bps = 0;  // per GPU and direction through the NVSwitch (0: none)
};
[[nodiscard]] std::vector<GpuPreset> gpu_presets();
[[nodiscard]] std::vector<std::string> preset_names();
[[nodiscard]] bool is_preset(std::string_view name);

// The GPUs of this machine, as the CLI found them (CUDA's count, name and memory, the GPU table's
// model): what `local` is built from on a GPU machine.
//   ranks <= count  a GPU a rank: PCIe to the host, and NVLink through an NVSwitch at
//                   nvlink_Bps a GPU where the model has it
//   ranks > count   every rank on the first GPU, as `burst run --loopback` runs them: each rank
//                   a 1/ranks share of its compute, memory and memory bandwidth, the ranks joined
//                   through its memory at half its bandwidth (a device copy reads and writes)
// Virtual nodes (--nodes) are joined by a "NIC" of the same bandwidth as the ranks within one.
struct LocalGpus {
  int count = 0;
  GpuSpec spec;           // the table's spec of the model (its model name selects calibration curves)
  double nvlink_Bps = 0;  // per GPU and direction; 0: PCIe only
  double pcie_Bps = 0;    // each GPU's link to the host
};

// A preset with `nodes` nodes (>= 1). `per_node` is the number of ranks per virtual node of
// `local` (0: its default: 2 CPU ranks, or a rank per GPU); other presets reject it. `gpus`
// builds `local` from this machine's GPUs instead of CPU ranks. Unknown names throw burst::Error
// with the list of presets and a did-you-mean.
[[nodiscard]] Topology make_preset(std::string_view name, int nodes = 1, int per_node = 0,
                                   const LocalGpus* gpus = nullptr);

}  // namespace burst::topo
