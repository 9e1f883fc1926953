// Boost.Graph Dijkstra with a lexicographic cost; see path_search.hpp for the rules.
#include "topologies/detail/path_search.hpp"

#include <algorithm>
#include <limits>
#include <tuple>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/property_map/function_property_map.hpp>

namespace burst::topo {
namespace {

// What a path has crossed so far; also what one arc adds (`bandwidth` = the arc's).
struct Cost {
  bool unreachable = false;
  int cpus = 0;      // CPU vertices entered
  int sockets = 0;   // inter-socket links crossed
  int switches = 0;  // PCIe switch vertices entered
  double bandwidth = std::numeric_limits<double>::infinity();
  int hops = 0;
  double latency = 0;
};

struct Better {
  bool operator()(const Cost& x, const Cost& y) const {
    return std::forward_as_tuple(x.unreachable, x.cpus, x.sockets, x.switches, y.bandwidth, x.hops, x.latency) <
           std::forward_as_tuple(y.unreachable, y.cpus, y.sockets, y.switches, x.bandwidth, y.hops, y.latency);
  }
};

struct Extend {
  Cost operator()(const Cost& path, const Cost& arc) const {
    if (path.unreachable) return path;
    return Cost{false,
                path.cpus + arc.cpus,
                path.sockets + arc.sockets,
                path.switches + arc.switches,
                std::min(path.bandwidth, arc.bandwidth),
                path.hops + arc.hops,
                path.latency + arc.latency};
  }
};

struct Arc {
  TemplateLinkDir dir = 0;
  LinkKind kind = LinkKind::Pcie;
  Cost cost;
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property, Arc>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
using Edge = boost::graph_traits<Graph>::edge_descriptor;

enum class Round { NvLink, SharedMemory, Pci };

bool is_endpoint(DeviceKind kind) { return kind == DeviceKind::Gpu || kind == DeviceKind::Nic; }

// The arcs a round may use.
struct RoundFilter {
  const Graph* graph = nullptr;
  const std::vector<Device>* devices = nullptr;
  Vertex source = 0;
  Round round = Round::Pci;

  bool operator()(const Edge& e) const {
    const Arc& arc = (*graph)[e];
    const Vertex from = boost::source(e, *graph);
    const DeviceKind via = (*devices)[from].kind;
    if (from != source && is_endpoint(via)) return false;
    switch (round) {
      case Round::NvLink: return arc.kind == LinkKind::NvLink && (from == source || via == DeviceKind::NvSwitch);
      case Round::SharedMemory: return arc.kind == LinkKind::SharedMemory && (from == source || via == DeviceKind::Cpu);
      case Round::Pci:
        return arc.kind != LinkKind::NvLink && arc.kind != LinkKind::Network &&
               (from == source || via == DeviceKind::Cpu || via == DeviceKind::PcieSwitch);
    }
    return false;
  }
};

Graph build_graph(const std::vector<Device>& devices, const std::vector<Link>& links) {
  Graph g(devices.size());
  for (std::size_t i = 0; i < links.size(); ++i) {
    const Link& l = links[i];
    for (int dir = 0; dir < 2; ++dir) {
      const int from = dir == 0 ? l.a : l.b;
      const int to = dir == 0 ? l.b : l.a;
      Arc arc;
      arc.dir = static_cast<TemplateLinkDir>(i * 2 + static_cast<std::size_t>(dir));
      arc.kind = l.kind;
      arc.cost.cpus = devices[static_cast<std::size_t>(to)].kind == DeviceKind::Cpu ? 1 : 0;
      arc.cost.switches = devices[static_cast<std::size_t>(to)].kind == DeviceKind::PcieSwitch ? 1 : 0;
      arc.cost.sockets = l.kind == LinkKind::InterSocket ? 1 : 0;
      arc.cost.bandwidth = l.bandwidth_Bps;
      arc.cost.hops = 1;
      arc.cost.latency = l.latency_s;
      boost::add_edge(static_cast<Vertex>(from), static_cast<Vertex>(to), arc, g);
    }
  }
  return g;
}

// Remembers, for every vertex, the arc that last improved it: the route back to the source.
struct RelaxRecorder : boost::base_visitor<RelaxRecorder> {
  using event_filter = boost::on_edge_relaxed;
  std::vector<Edge>* via;
  std::vector<bool>* has_via;
  template <class G>
  void operator()(Edge e, const G& graph) const {
    const auto to = boost::target(e, graph);
    (*via)[to] = e;
    (*has_via)[to] = true;
  }
};

PathClass classify(Round round, const Cost& c) {
  switch (round) {
    case Round::NvLink: return PathClass::NVL;
    case Round::SharedMemory: return PathClass::SHM;
    case Round::Pci: break;
  }
  if (c.cpus >= 2 || c.sockets > 0) return PathClass::SYS;
  if (c.cpus == 1) return PathClass::PHB;
  if (c.switches >= 2) return PathClass::PXB;
  return PathClass::PIX;
}

}  // namespace

std::vector<TemplateLinkDir> reversed(const std::vector<TemplateLinkDir>& route) {
  std::vector<TemplateLinkDir> out(route.rbegin(), route.rend());
  for (auto& d : out) d ^= 1;
  return out;
}

std::vector<FoundPath> search_paths(const std::vector<Device>& devices, const std::vector<Link>& links, int source) {
  const Graph g = build_graph(devices, links);
  const std::size_t n = devices.size();
  const auto src = static_cast<Vertex>(source);
  std::vector<FoundPath> found(n);

  Cost unreachable;
  unreachable.unreachable = true;
  for (const Round round : {Round::NvLink, Round::SharedMemory, Round::Pci}) {
    const RoundFilter filter{&g, &devices, src, round};
    const boost::filtered_graph<Graph, RoundFilter> view(g, filter);
    std::vector<Cost> cost(n, unreachable);
    std::vector<Edge> via(n);
    std::vector<bool> has_via(n, false);
    const RelaxRecorder recorder{{}, &via, &has_via};
    boost::dijkstra_shortest_paths(
        view, src,
        boost::distance_map(boost::make_iterator_property_map(cost.begin(), boost::get(boost::vertex_index, g)))
            .weight_map(boost::get(&Arc::cost, g))
            .distance_compare(Better{})
            .distance_combine(Extend{})
            .distance_inf(unreachable)
            .distance_zero(Cost{})
            .visitor(boost::make_dijkstra_visitor(recorder)));

    for (std::size_t v = 0; v < n; ++v) {
      if (found[v].found || cost[v].unreachable || v == static_cast<std::size_t>(source)) continue;
      FoundPath& p = found[v];
      p.found = true;
      p.info = PathInfo{classify(round, cost[v]), cost[v].bandwidth, cost[v].latency, cost[v].hops};
      for (Vertex at = static_cast<Vertex>(v); at != src && has_via[at]; at = boost::source(via[at], g)) {
        p.route.push_back(g[via[at]].dir);
      }
      std::reverse(p.route.begin(), p.route.end());
    }
  }
  return found;
}

}  // namespace burst::topo
