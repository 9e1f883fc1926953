// One node's devices and links, and everything derived from them once: for every GPU pair the
// path (class, bottleneck, latency, hops, the directed links it crosses), and for every GPU
// the NIC it uses. Built with Boost.Graph; immutable after construction. See topology.hpp for
// the classification rules.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "topologies/topology.hpp"

namespace burst::topo {

// A direction of a template link: link index * 2 + 0 for a->b, + 1 for b->a.
using TemplateLinkDir = std::int32_t;

class NodeTemplate {
 public:
  // Validates (GPUs present, link ends valid, bandwidths positive, every GPU reachable from
  // every other) and throws burst::Error listing every problem. `where` prefixes the location
  // of each problem ("topo.json:/node" gives "topo.json:/node/links/3").
  NodeTemplate(std::vector<Device> devices, std::vector<Link> links, std::string where = "node");

  [[nodiscard]] const std::vector<Device>& devices() const { return devices_; }
  [[nodiscard]] const std::vector<Link>& links() const { return links_; }
  [[nodiscard]] int gpu_count() const { return static_cast<int>(gpu_devices_.size()); }
  [[nodiscard]] int gpu_device(int local_gpu) const { return gpu_devices_[local_gpu]; }
  [[nodiscard]] const std::vector<int>& nic_devices() const { return nic_devices_; }
  [[nodiscard]] int nets() const;  // sum of NIC ports
  // Device index by name, or -1.
  [[nodiscard]] int device_index(std::string_view name) const;
  // Network bandwidth of a NIC device (port bandwidth x ports), per direction.
  [[nodiscard]] double nic_bandwidth(int nic_device) const;

  [[nodiscard]] const PathInfo& path(int local_a, int local_b) const;
  [[nodiscard]] const std::vector<TemplateLinkDir>& route(int local_a, int local_b) const;
  [[nodiscard]] const NicAttachment& nic_of(int local_gpu) const { return nic_of_[local_gpu]; }
  // GPU -> its NIC and NIC -> GPU, as directed template links.
  [[nodiscard]] const std::vector<TemplateLinkDir>& route_to_nic(int local_gpu) const;
  [[nodiscard]] const std::vector<TemplateLinkDir>& route_from_nic(int local_gpu) const;
  // The path from a GPU to its NIC (class, bottleneck, latency, hops); zero when it has none.
  [[nodiscard]] const PathInfo& nic_path(int local_gpu) const { return nic_path_[local_gpu]; }

 private:
  std::vector<Device> devices_;
  std::vector<Link> links_;
  std::vector<int> gpu_devices_;
  std::vector<int> nic_devices_;
  std::vector<PathInfo> paths_;                       // gpu_count^2
  std::vector<std::vector<TemplateLinkDir>> routes_;  // gpu_count^2
  std::vector<NicAttachment> nic_of_;
  std::vector<std::vector<TemplateLinkDir>> to_nic_, from_nic_;
  std::vector<PathInfo> nic_path_;
};

}  // namespace burst::topo
