#include "tools/jobs/topology_source.hpp"

#include <vector>

#include <fmt/format.h>

#include "topologies/load.hpp"
#include "topologies/local_calibration.hpp"

namespace burst::jobs {

topo::Topology load_topology_source(const TopologySource& s) {
  std::vector<std::string> notes;
  topo::Topology t = topo::load_topology(
      s.topology, topo::LoadOptions{.nodes = s.nodes, .per_node = s.per_node, .nvlink_from = s.nvlink_from,
                                    .gpu_from = s.gpu_from, .nic_speed = s.nic_speed,
                                    .nccl_bandwidths = s.nccl_bandwidths, .notes = &notes});
  for (const auto& note : notes) fmt::print(stderr, "note: {}\n", note);
  if (s.topology == "local" && topo::local_calibration().source == "defaults") {
    const std::string where = topo::local_calibration_write_path();
    fmt::print(stderr,
               "warning: --topology local is uncalibrated: its speeds are conservative defaults, and predicted step "
               "times can be 3x the measured ones. Measure this machine first (seconds): mpirun -np {} burst calibrate "
               "--per-node {} --device cpu (it writes {})\n",
               t.gpu_count(), t.gpus_per_node(), where.empty() ? "the file $BURST_LOCAL_CALIBRATION names" : where);
  }
  return t;
}

}  // namespace burst::jobs
