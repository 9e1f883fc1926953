// One entry point for "a topology the user named": a preset name, a file in our JSON format
// (.json) or an NCCL topology dump (.xml, one node, replicated `nodes` times over a
// rail-optimised fabric). Used by every CLI command that takes --topology.
#pragma once

#include <string>
#include <vector>

#include "topologies/presets.hpp"
#include "topologies/topology.hpp"

namespace burst::topo {

struct LoadOptions {
  int nodes = 0;                 // 0: the preset's default (1) or the file's value
  int per_node = 0;              // `local` only: ranks per virtual node (0: its default)
  std::string nvlink_from;       // NCCL XML skeletons: preset whose NVLink fabric completes them
  std::string gpu_from;          // NCCL XML: preset whose GPU spec to use (unknown PCI device ids)
  std::string nic_speed;         // NCCL XML: port speed of NICs without <net>, e.g. "100Gbps"
  bool nccl_bandwidths = false;  // NCCL XML: NCCL's derated link figures instead of physical ones
  // `local`: this machine's GPUs (the CLI's probe); null: CPU ranks.
  const LocalGpus* local_gpus = nullptr;
  // Where to append what an importer assumed ("topo.xml:7: empty PCIe link_speed: ..."); may be null.
  std::vector<std::string>* notes = nullptr;
};

// Throws burst::Error: an unknown name that is not a file gets the list of presets and a
// did-you-mean; a file gets its parser's problems.
[[nodiscard]] Topology load_topology(const std::string& preset_or_file, const LoadOptions& options = {});

}  // namespace burst::topo
