#include "tools/burst/topology_source.hpp"

#include "tools/burst/local_gpus.hpp"
#include "tools/burst/validators.hpp"

namespace burst::cli {

void add_topology_source_options(CLI::App& cmd, TopologySource& s, bool with_per_node) {
  cmd.add_option("--nodes", s.nodes, "Number of nodes (default: the preset's 1, or the file's)")->check(kAtLeastOne);
  if (with_per_node) {
    cmd.add_option("--per-node", s.per_node,
                   "local preset: ranks per virtual node (default: one per GPU, or 2 CPU ranks; more ranks than GPUs "
                   "share the first GPU, as burst run --loopback runs them)")
        ->check(kAtLeastOne);
    cmd.add_option("--local-device", s.local_device,
                   "local preset: build it from this machine's GPUs (cuda; the default where one is visible) or from "
                   "CPU ranks over MPI (cpu)")
        ->check(CLI::IsMember({"cuda", "cpu"}));
    s.probe_gpus = probe_local_gpus;
  }
  cmd.add_option("--nvlink-from", s.nvlink_from, "NCCL XML skeleton: preset whose NVLink fabric completes it");
  cmd.add_option("--gpu-from", s.gpu_from, "NCCL XML: preset whose GPU spec to use");
  cmd.add_option("--nic-speed", s.nic_speed, "NCCL XML: port speed of NICs without <net>, e.g. 100Gbps");
  cmd.add_flag("--nccl-bandwidths", s.nccl_bandwidths,
               "NCCL XML: NCCL's derated link bandwidths (PCIe gen4 x16 24 GB/s, NVLink 20 GB/s a link on A100) "
               "instead of physical ones (docs/topology-format.md)");
}

}  // namespace burst::cli
