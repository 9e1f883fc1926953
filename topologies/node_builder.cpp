#include "topologies/node_builder.hpp"

#include <stdexcept>

namespace burst::topo {

int NodeBuilder::device(DeviceKind kind, std::string name) {
  Device d{kind, std::move(name)};
  devices_.push_back(std::move(d));
  return static_cast<int>(devices_.size() - 1);
}

int NodeBuilder::nic(std::string name, int ports, double port_bandwidth_Bps) {
  const int i = device(DeviceKind::Nic, std::move(name));
  devices_.back().ports = ports;
  devices_.back().port_bandwidth_Bps = port_bandwidth_Bps;
  return i;
}

void NodeBuilder::link(int a, int b, LinkKind kind, double bandwidth_Bps, double latency_s, Sharing sharing) {
  links_.push_back(Link{a, b, kind, bandwidth_Bps, latency_s, sharing});
}

void NodeBuilder::link(std::string_view a, std::string_view b, LinkKind kind, double bandwidth_Bps,
                       double latency_s, Sharing sharing) {
  const int ia = index(a), ib = index(b);
  if (ia < 0 || ib < 0) throw std::logic_error("NodeBuilder::link: unknown device name");
  link(ia, ib, kind, bandwidth_Bps, latency_s, sharing);
}

void NodeBuilder::set_port_bandwidth(int nic, double port_bandwidth_Bps) {
  devices_.at(static_cast<std::size_t>(nic)).port_bandwidth_Bps = port_bandwidth_Bps;
}

int NodeBuilder::index(std::string_view name) const {
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::shared_ptr<const NodeTemplate> NodeBuilder::build(std::string where) const {
  return std::make_shared<const NodeTemplate>(devices_, links_, std::move(where));
}

}  // namespace burst::topo
