// Copies of an attention layer and when one stands for all (copies.hpp).
#include "simulator/detail/attention/copies.hpp"

#include <set>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

namespace burst::sim {
namespace {

// Every (source, destination) world-rank pair a transfer of the graph uses.
void transfer_pairs(const TaskGraph& graph, std::set<std::pair<int, int>>& pairs) {
  for (const Task& t : graph.tasks()) {
    if (t.kind == TaskKind::Transfer) pairs.emplace(t.gpu, t.peer);
  }
}

// Who crosses a link, and through which links the traffic arrives and leaves.
struct Crossing {
  std::set<int> copies;
  std::set<topo::LinkId> from, to;  // the links just before and just after it on the routes
  bool first_hop = false, last_hop = false;
};

// Whether a link two copies share could limit them: not when the links that feed it (or those
// it feeds), all the traffic's way in (or out), cannot carry more than it can and each belongs
// to one copy, as a node's spine uplink on a non-blocking fat tree carries at most what its
// NICs send, one NIC per copy. A feeding link that copies share does not excuse it: the two are
// then one shared path (a NIC's uplink and the peer NIC's downlink, both carrying two copies).
bool can_bind(const topo::Topology& topology, topo::LinkId link, const Crossing& c,
              const std::unordered_map<topo::LinkId, Crossing>& crossings) {
  const auto excuses = [&](const std::set<topo::LinkId>& links) {
    double sum = 0;
    for (const topo::LinkId l : links) {
      if (crossings.at(l).copies.size() > 1) return false;
      sum += topology.link(l).bandwidth_Bps;
    }
    return sum <= topology.link(link).bandwidth_Bps * (1 + 1e-12);
  };
  const bool fed_within = !c.first_hop && excuses(c.from);
  const bool drained_within = !c.last_hop && excuses(c.to);
  return !fed_within && !drained_within;
}

bool alike(const topo::DirectedLink& a, const topo::DirectedLink& b) {
  return a.kind == b.kind && a.bandwidth_Bps == b.bandwidth_Bps && a.latency_s == b.latency_s && a.sharing == b.sharing;
}

}  // namespace

std::function<int(int rank, int copy)> copy_gpus(const AttentionShape& shape, const World& world) {
  const int tp = shape.tensor_parallel, ranks = world.size();
  return [tp, ranks](int rank, int copy) { return topology_gpu(tp, ranks, rank, copy); };
}

LoweredAttention place_copies(const LoweredAttention& one, const AttentionShape& shape, const World& world,
                              const topo::Topology& topology, int copies) {
  const auto gpu_of = copy_gpus(shape, world);
  const auto spread = [&](const std::vector<double>& per_rank) {
    std::vector<double> per_gpu(static_cast<std::size_t>(topology.gpu_count()), 0.0);
    for (int copy = 0; copy < copies; ++copy) {
      for (std::size_t r = 0; r < per_rank.size(); ++r)
        per_gpu[static_cast<std::size_t>(gpu_of(static_cast<int>(r), copy))] = per_rank[r];
    }
    return per_gpu;
  };
  return {TaskGraph::replicated(one.forward, copies, topology.gpu_count(), gpu_of),
          TaskGraph::replicated(one.backward, copies, topology.gpu_count(), gpu_of), spread(one.forward_flops),
          spread(one.backward_flops), one.fold};
}

std::string copies_not_equivalent(const LoweredAttention& one, const AttentionShape& shape, const World& world,
                                  const topo::Topology& topology) {
  return placements_not_equivalent(one, shape.tensor_parallel * shape.data_parallel, copy_gpus(shape, world), topology,
                                   "copy");
}

std::string placements_not_equivalent(const LoweredAttention& one, int copies,
                                      const std::function<int(int rank, int placement)>& gpu_of,
                                      const topo::Topology& topology, const std::string& noun) {
  const std::string nouns = noun == "copy" ? "copies" : noun + "s";
  // The forward and the backward are simulated apart: a link is shared only within a phase.
  for (const TaskGraph* phase : {&one.forward, &one.backward}) {
    std::set<std::pair<int, int>> pairs;
    transfer_pairs(*phase, pairs);
    std::unordered_map<topo::LinkId, Crossing> crossings;
    std::vector<topo::LinkId> route, first;
    for (const auto& [src, dst] : pairs) {
      for (int copy = 0; copy < copies; ++copy) {
        topology.route(gpu_of(src, copy), gpu_of(dst, copy), route);
        if (copy == 0) {
          first = route;
        } else if (route.size() != first.size()) {
          return fmt::format("{0} {1} reaches rank {2} from rank {3} over {4} links, {0} 0 over {5}", noun, copy, dst,
                             src, route.size(), first.size());
        }
        for (std::size_t i = 0; i < route.size(); ++i) {
          if (!alike(topology.link(route[i]), topology.link(first[i]))) {
            return fmt::format("{0} {1} crosses {2} where {0} 0 crosses {3}, a different link", noun, copy,
                               topology.link_name(route[i]), topology.link_name(first[i]));
          }
          Crossing& c = crossings[route[i]];
          c.copies.insert(copy);
          if (i > 0) c.from.insert(route[i - 1]);
          if (i + 1 < route.size()) c.to.insert(route[i + 1]);
          c.first_hop |= i == 0;
          c.last_hop |= i + 1 == route.size();
        }
      }
    }
    for (const auto& [link, c] : crossings) {
      if (c.copies.size() > 1 && can_bind(topology, link, c, crossings)) {
        return fmt::format("{} {} and {} both cross {} in the {}", nouns, *c.copies.begin(),
                           *std::next(c.copies.begin()), topology.link_name(link),
                           phase == &one.forward ? "forward" : "backward");
      }
    }
  }
  return "";
}

}  // namespace burst::sim
