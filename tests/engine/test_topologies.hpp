// Small topologies whose numbers are easy to compute by hand, built directly from a node
// template (no preset), for the engine and cost model tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "topologies/node_template.hpp"
#include "topologies/topology.hpp"

namespace burst::test {

inline topo::GpuSpec test_gpu(std::string model = "TestGPU") {
  return topo::GpuSpec{std::move(model), 100e12, 80e9, 2e12};
}

// One node: `gpus` GPUs joined by one NVSwitch, each by a link of `bandwidth` per direction
// and `latency`; a transfer gpu a -> gpu b crosses "gpu a -> nvswitch" and "nvswitch -> gpu b".
inline topo::Topology star(int gpus, double bandwidth, double latency, topo::Sharing sharing = topo::Sharing::Shared) {
  std::vector<topo::Device> devices;
  std::vector<topo::Link> links;
  for (int g = 0; g < gpus; ++g) devices.push_back({topo::DeviceKind::Gpu, "gpu" + std::to_string(g)});
  devices.push_back({topo::DeviceKind::NvSwitch, "nvswitch"});
  for (int g = 0; g < gpus; ++g) links.push_back({g, gpus, topo::LinkKind::NvLink, bandwidth, latency, sharing});
  auto node = std::make_shared<const topo::NodeTemplate>(std::move(devices), std::move(links));
  return topo::Topology("star", test_gpu(), node, 1, topo::Fabric{});
}

// One node: GPU g joined to one NVSwitch by a link of its own bandwidth and sharing rule.
inline topo::Topology star_mixed(const std::vector<std::pair<double, topo::Sharing>>& gpu_links, double latency) {
  std::vector<topo::Device> devices;
  std::vector<topo::Link> links;
  const int gpus = static_cast<int>(gpu_links.size());
  for (int g = 0; g < gpus; ++g) devices.push_back({topo::DeviceKind::Gpu, "gpu" + std::to_string(g)});
  devices.push_back({topo::DeviceKind::NvSwitch, "nvswitch"});
  for (int g = 0; g < gpus; ++g) {
    const auto& [bandwidth, sharing] = gpu_links[static_cast<std::size_t>(g)];
    links.push_back({g, gpus, topo::LinkKind::NvLink, bandwidth, latency, sharing});
  }
  auto node = std::make_shared<const topo::NodeTemplate>(std::move(devices), std::move(links));
  return topo::Topology("star-mixed", test_gpu(), node, 1, topo::Fabric{});
}

// `nodes` nodes of `gpus` GPUs on an NVSwitch (FatPipe NVLink of `nvlink` bandwidth) and one
// NIC per node of `nic` bandwidth reached over PCIe (`pcie`), rail-optimised fabric.
inline topo::Topology cluster(int nodes, int gpus, double nvlink, double pcie, double nic,
                              topo::Sharing nvlink_sharing = topo::Sharing::Shared) {
  std::vector<topo::Device> devices;
  std::vector<topo::Link> links;
  for (int g = 0; g < gpus; ++g) devices.push_back({topo::DeviceKind::Gpu, "gpu" + std::to_string(g)});
  const int sw = gpus, pcie_sw = gpus + 1, nic_dev = gpus + 2;
  devices.push_back({topo::DeviceKind::NvSwitch, "nvswitch"});
  devices.push_back({topo::DeviceKind::PcieSwitch, "pcie-sw"});
  devices.push_back({topo::DeviceKind::Nic, "nic0", 1, nic});
  for (int g = 0; g < gpus; ++g) {
    links.push_back({g, sw, topo::LinkKind::NvLink, nvlink, 1e-6, nvlink_sharing});
    links.push_back({g, pcie_sw, topo::LinkKind::Pcie, pcie, 1e-6, topo::Sharing::Shared});
  }
  links.push_back({pcie_sw, nic_dev, topo::LinkKind::Pcie, pcie, 1e-6, topo::Sharing::Shared});
  auto node = std::make_shared<const topo::NodeTemplate>(std::move(devices), std::move(links));
  return topo::Topology("cluster", test_gpu(), node, nodes, topo::Fabric{});
}

}  // namespace burst::test
