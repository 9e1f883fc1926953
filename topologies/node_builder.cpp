#include "topologies/detail/node_builder.hpp"

#include <stdexcept>

namespace burst::topo {

int NodeBuilder::device(DeviceKind kind, std::string name) {
  const int i = static_cast<int>(devices_.size());
  by_name_.try_emplace(name, i);  // a duplicate keeps the first: NodeTemplate reports it
  devices_.push_back(Device{kind, std::move(name)});
  return i;
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

void NodeBuilder::link(std::string_view a, std::string_view b, LinkKind kind, double bandwidth_Bps, double latency_s,
                       Sharing sharing) {
  const int ia = index(a), ib = index(b);
  if (ia < 0 || ib < 0) throw std::logic_error("NodeBuilder::link: unknown device name");
  link(ia, ib, kind, bandwidth_Bps, latency_s, sharing);
}

void NodeBuilder::set_port_bandwidth(int nic, double port_bandwidth_Bps) {
  devices_.at(static_cast<std::size_t>(nic)).port_bandwidth_Bps = port_bandwidth_Bps;
}

int NodeBuilder::index(std::string_view name) const {
  const auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? -1 : it->second;
}

std::shared_ptr<const NodeTemplate> NodeBuilder::build(std::string where) const {
  return std::make_shared<const NodeTemplate>(devices_, links_, std::move(where));
}

}  // namespace burst::topo
