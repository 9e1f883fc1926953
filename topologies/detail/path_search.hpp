// Best paths inside one node, found with Boost.Graph's Dijkstra over a cost that encodes the
// path class.
//
// The search runs in up to three rounds, each on a filtered view of the node graph, and the
// first round that reaches a destination decides its class (NCCL's src/graph order):
//   1. NVLink arcs only, NVSwitch planes as the only intermediate vertices   -> NVL
//   2. shared-memory arcs only, CPUs as the only intermediate vertices       -> SHM
//   3. every other arc (PCIe, inter-socket, shared memory), through PCIe switches and CPUs;
//      the class follows from what the path crossed: two CPUs or an inter-socket link -> SYS,
//      one CPU -> PHB, two or more PCIe switches -> PXB, else PIX.
// GPUs and NICs never forward: an arc may leave such a vertex only when it is the source.
//
// The cost compared is lexicographic (CPUs crossed, inter-socket links, PCIe switches,
// -bottleneck bandwidth, hops, latency). Every component is a sum or a min along the path, so
// the order is isotone and Dijkstra returns the exact optimum: the best class first, the
// widest path of that class next.
#pragma once

#include <vector>

#include "topologies/node_template.hpp"

namespace burst::topo {

struct FoundPath {
  bool found = false;
  PathInfo info;
  std::vector<TemplateLinkDir> route;  // directed template links, source first
};

// Best paths from `source` to every device (index = device index). Devices and links must
// already be validated (link ends in range).
[[nodiscard]] std::vector<FoundPath> search_paths(const std::vector<Device>& devices, const std::vector<Link>& links,
                                                  int source);

// The same route walked backwards (b -> a from a -> b).
[[nodiscard]] std::vector<TemplateLinkDir> reversed(const std::vector<TemplateLinkDir>& route);

}  // namespace burst::topo
