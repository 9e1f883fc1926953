// What-if variants of a cluster: the same machine with a different node count, NVLink
// bandwidth or number of network ports per node. `burst whatif --vary` builds its grid from
// these.
//
// with_intra_bandwidth(B): every NVLink link of the node scaled by one factor so that the
// bottleneck between two GPUs of a node is B per direction (the figure vendors quote per GPU:
// 200 GB/s on A800 and H800, 300 on A100, 450 on H100).
// with_nets_per_node(n): the node's network ports. With K NICs, n a multiple of K gives every
// NIC n/K ports of the same speed (more bandwidth through the same PCIe attachment); n a
// divisor of K keeps every (K/n)-th NIC and removes the others with their links (GPUs then
// share the remaining NICs, nearest first).
#pragma once

#include "topologies/topology.hpp"

namespace burst::topo {

// Throw burst::Error naming `field` when the variant does not apply to this node.
[[nodiscard]] Topology with_intra_bandwidth(const Topology& topology, double bandwidth_Bps, std::string_view field);
[[nodiscard]] Topology with_nets_per_node(const Topology& topology, int nets, std::string_view field);

}  // namespace burst::topo
