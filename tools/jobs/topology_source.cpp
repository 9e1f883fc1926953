#include "tools/jobs/topology_source.hpp"

#include <vector>

#include <fmt/format.h>

#include "topologies/load.hpp"

namespace burst::jobs {

topo::Topology load_topology_source(const TopologySource& s) {
  std::vector<std::string> notes;
  topo::Topology t = topo::load_topology(
      s.topology, topo::LoadOptions{s.nodes, s.per_node, s.nvlink_from, s.gpu_from, s.nic_speed, &notes});
  for (const auto& note : notes) fmt::print(stderr, "note: {}\n", note);
  return t;
}

}  // namespace burst::jobs
