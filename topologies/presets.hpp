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
//   local      CPU ranks over MPI on this machine (see local_calibration.hpp)
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
};
[[nodiscard]] std::vector<GpuPreset> gpu_presets();
[[nodiscard]] std::vector<std::string> preset_names();
[[nodiscard]] bool is_preset(std::string_view name);

// A preset with `nodes` nodes (>= 1). `per_node` is the number of ranks per virtual node of
// `local` (0: its default, 2); other presets reject it. Unknown names throw burst::Error with
// the list of presets and a did-you-mean.
[[nodiscard]] Topology make_preset(std::string_view name, int nodes = 1, int per_node = 0);

}  // namespace burst::topo
