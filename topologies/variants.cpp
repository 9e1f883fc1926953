// Cluster variants for what-if sweeps (see variants.hpp).
#include "topologies/variants.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/units.hpp"
#include "topologies/node_template.hpp"

namespace burst::topo {
namespace {

Topology rebuilt(const Topology& topology, std::vector<Device> devices, std::vector<Link> links) {
  auto node = std::make_shared<const NodeTemplate>(std::move(devices), std::move(links), topology.name() + ":node");
  return Topology(topology.name(), topology.gpu(), std::move(node), topology.nodes(), topology.fabric());
}

}  // namespace

Topology with_intra_bandwidth(const Topology& topology, double bandwidth_Bps, std::string_view field) {
  const PathInfo worst = topology.intra_node_worst();
  if (topology.gpus_per_node() < 2 || worst.cls != PathClass::NVL) {
    throw Error(Problem{std::string(field),
                        fmt::format("'{}' has {} GPU(s) per node joined by {}: there is no NVLink bandwidth to vary",
                                    topology.name(), topology.gpus_per_node(), to_string(worst.cls)),
                        "a topology whose GPUs are joined by NVLink", "vary nets_per_node or nodes instead"});
  }
  if (!(bandwidth_Bps > 0)) {
    throw Error(Problem{std::string(field), "the bandwidth must be positive", "e.g. 450GBps", ""});
  }
  const double factor = bandwidth_Bps / worst.bandwidth_Bps;
  std::vector<Link> links = topology.node().links();
  for (Link& link : links) {
    if (link.kind == LinkKind::NvLink) link.bandwidth_Bps *= factor;
  }
  return rebuilt(topology, topology.node().devices(), std::move(links));
}

Topology with_nets_per_node(const Topology& topology, int nets, std::string_view field) {
  const NodeTemplate& node = topology.node();
  const auto nics = static_cast<int>(node.nic_devices().size());
  const std::string valid =
      nics == 0 ? "none: the node has no NIC" : fmt::format("a multiple or a divisor of the node's {} NICs", nics);
  if (nics == 0 || nets < 1 || (nets % nics != 0 && nics % nets != 0)) {
    throw Error(Problem{std::string(field), fmt::format("{} network ports per node on '{}'", nets, topology.name()),
                        valid, nics == 0 ? "this topology has no network to vary" : ""});
  }
  std::vector<Device> devices = node.devices();
  if (nets % nics == 0) {
    for (const int d : node.nic_devices()) {
      Device& nic = devices[static_cast<std::size_t>(d)];
      nic.ports = nets / nics;
    }
    return rebuilt(topology, std::move(devices), node.links());
  }
  // Keep every (nics / nets)-th NIC: renumber the devices that stay and drop the links of the others.
  const int keep_every = nics / nets;
  std::vector<int> new_index(devices.size(), -1);
  std::vector<bool> dropped(devices.size(), false);
  for (int i = 0; i < nics; ++i) {
    if (i % keep_every != 0) dropped[static_cast<std::size_t>(node.nic_devices()[static_cast<std::size_t>(i)])] = true;
  }
  std::vector<Device> kept;
  for (std::size_t d = 0; d < devices.size(); ++d) {
    if (dropped[d]) continue;
    new_index[d] = static_cast<int>(kept.size());
    kept.push_back(devices[d]);
  }
  std::vector<Link> links;
  for (Link link : node.links()) {
    const int a = new_index[static_cast<std::size_t>(link.a)], b = new_index[static_cast<std::size_t>(link.b)];
    if (a < 0 || b < 0) continue;
    link.a = a;
    link.b = b;
    links.push_back(link);
  }
  return rebuilt(topology, std::move(kept), std::move(links));
}

}  // namespace burst::topo
