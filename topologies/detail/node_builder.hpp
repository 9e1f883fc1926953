// Assembling a node template by device name, for presets, parsers and tests:
//   NodeBuilder b;
//   b.device(DeviceKind::Gpu, "gpu0"); b.device(DeviceKind::NvSwitch, "nvswitch");
//   b.link("gpu0", "nvswitch", LinkKind::NvLink, 200e9, 0.35e-6);
//   auto node = b.build();
// Name lookups happen here, once, in a hash index (a node of 1000 devices linked by name is
// linear work, not a scan of the devices per link); NodeTemplate validates the result and
// derives the paths.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "topologies/node_template.hpp"

namespace burst::topo {

class NodeBuilder {
 public:
  // Adds a device and returns its index.
  int device(DeviceKind kind, std::string name);
  // Adds a NIC with `ports` network ports of `port_bandwidth_Bps` each.
  int nic(std::string name, int ports, double port_bandwidth_Bps);
  void link(int a, int b, LinkKind kind, double bandwidth_Bps, double latency_s, Sharing sharing = Sharing::Shared);
  // By name; both devices must have been added (a missing name is a programming error: throws
  // std::logic_error).
  void link(std::string_view a, std::string_view b, LinkKind kind, double bandwidth_Bps, double latency_s,
            Sharing sharing = Sharing::Shared);

  void set_port_bandwidth(int nic, double port_bandwidth_Bps);

  [[nodiscard]] int index(std::string_view name) const;  // the first device of that name; -1 when absent
  [[nodiscard]] const std::vector<Device>& devices() const { return devices_; }
  [[nodiscard]] const std::vector<Link>& links() const { return links_; }
  [[nodiscard]] std::shared_ptr<const NodeTemplate> build(std::string where = "node") const;

 private:
  std::vector<Device> devices_;
  std::vector<Link> links_;
  std::unordered_map<std::string, int> by_name_;  // the first device of each name
};

}  // namespace burst::topo
