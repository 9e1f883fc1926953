#include "simulator/costs/measured_links.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/units.hpp"

namespace burst::sim {
namespace {

// The slowest link on the route from `a` to `b`.
topo::DirectedLink slowest_link(const topo::Topology& t, int a, int b) {
  std::vector<topo::LinkId> route;
  t.route(a, b, route);
  if (route.empty()) throw Error(Problem{t.name(), fmt::format("GPUs {} and {} share no link", a, b), "", ""});
  topo::DirectedLink slowest = t.link(route.front());
  for (const topo::LinkId id : route) {
    const topo::DirectedLink l = t.link(id);
    if (l.bandwidth_Bps < slowest.bandwidth_Bps) slowest = l;
  }
  return slowest;
}

}  // namespace

Json measured_link_fields(const topo::Topology& t, const std::optional<MeasuredLink>& intra,
                          const std::optional<MeasuredLink>& inter) {
  Json efficiency = Json::object(), latency = Json::object();
  const auto add = [&](const MeasuredLink& m, int a, int b) {
    const topo::DirectedLink link = slowest_link(t, a, b);
    const topo::PathInfo path = t.path(a, b);
    const char* kind = topo::to_string(link.kind);
    double e = std::clamp(m.bandwidth_Bps / link.bandwidth_Bps, 0.001, 1.0);
    if (efficiency.contains(kind)) e = std::min(e, efficiency[kind].get<double>());
    efficiency[kind] = e;
    latency[topo::to_string(path.cls)] = units::format_duration(std::max(0.0, m.latency_s - path.latency_s));
  };
  if (intra) {
    if (t.gpus_per_node() < 2) {
      throw Error(Problem{t.name(), "an intra-node measurement, but the topology has one GPU per node", "", ""});
    }
    add(*intra, 0, 1);
  }
  if (inter) {
    if (t.nodes() < 2)
      throw Error(Problem{t.name(), "an inter-node measurement, but the topology has one node", "", ""});
    add(*inter, 0, t.gpus_per_node());
  }
  Json fields = Json::object();
  if (!efficiency.empty()) fields["link_efficiency"] = efficiency;
  if (!latency.empty()) fields["latency"] = latency;
  return fields;
}

}  // namespace burst::sim
