// Ring geometry and schedule (see ring.hpp).
#include "simulator/attention/ring.hpp"

#include <fmt/format.h>

namespace burst::sim {

World world_of(const topo::Topology& topology) { return World{topology.nodes(), topology.gpus_per_node()}; }

World replica_world(const topo::Topology& topology, int tp, int dp) {
  tp = std::max(1, tp);
  dp = std::max(1, dp);
  const int nodes = topology.nodes();
  if (topology.gpus_per_node() % tp != 0) return World{nodes, 0};
  const int ranks_per_node = topology.gpus_per_node() / tp;
  if (nodes % dp == 0) return World{nodes / dp, ranks_per_node};
  const int parts_per_node = dp / nodes;  // replicas sharing one node
  if (dp % nodes == 0 && ranks_per_node % parts_per_node == 0) return World{1, ranks_per_node / parts_per_node};
  return World{nodes, 0};
}

World attention_world(const AttentionShape& shape, const topo::Topology& topology) {
  return replica_world(topology, shape.tensor_parallel, shape.data_parallel);
}

int topology_gpu(int tensor_parallel, int replica_ranks, int rank, int copy) {
  return tensor_parallel * ((copy / tensor_parallel) * replica_ranks + rank) + copy % tensor_parallel;
}

int ring_ranks_per_node(int ulysses, const World& world) {
  return ulysses < world.gpus_per_node ? world.gpus_per_node / ulysses : 1;
}

RingGeometry ring_geometry(const AttentionStrategy& strategy, const World& world) {
  RingGeometry g;
  g.world = world.size();
  g.ulysses = strategy.ulysses;
  g.ring = g.world / g.ulysses;
  if (strategy.ring == RingKind::Flat) {
    g.inner = g.ring;
  } else {
    g.inner = strategy.inner > 0 ? strategy.inner : ring_ranks_per_node(strategy.ulysses, world);
  }
  g.outer = g.ring / g.inner;
  return g;
}

std::vector<int> ring_level_sizes(const RingGeometry& geometry) {
  std::vector<int> sizes;
  for (const int n : {geometry.inner, geometry.outer}) {
    if (n > 1) sizes.push_back(n);
  }
  return sizes;
}

std::vector<std::string> check_ring(const RingGeometry& g) {
  std::vector<std::string> problems;
  if (g.world != g.ring * g.ulysses || g.ring != g.inner * g.outer) {
    problems.push_back(
        fmt::format("sizes do not multiply: world {} != ring {} x ulysses {}, or ring != inner {} x outer {}", g.world,
                    g.ring, g.ulysses, g.inner, g.outer));
    return problems;
  }
  std::vector<int> seen(static_cast<std::size_t>(g.world), 0);
  for (int j = 0; j < g.ulysses; ++j) {
    for (int k = 0; k < g.ring; ++k) ++seen[static_cast<std::size_t>(g.world_rank(k, j))];
  }
  for (int w = 0; w < g.world; ++w) {
    if (seen[static_cast<std::size_t>(w)] != 1) {
      problems.push_back(fmt::format("world rank {} sits in {} ring positions", w, seen[static_cast<std::size_t>(w)]));
    }
  }
  const auto r = static_cast<std::size_t>(g.ring);
  std::vector<int> by_rank(r * r, 0), by_step(r * r, 0);
  for (int k = 0; k < g.ring; ++k) {
    if (g.block_at(k, 0) != k) problems.push_back(fmt::format("ring rank {} does not start with its own block", k));
    for (int t = 0; t < g.ring; ++t) {
      const int b = g.block_at(k, t);
      if (b < 0 || b >= g.ring) {
        problems.push_back(fmt::format("ring rank {} holds block {} at step {}: no such rank", k, b, t));
        continue;
      }
      ++by_rank[static_cast<std::size_t>(k) * r + static_cast<std::size_t>(b)];
      ++by_step[static_cast<std::size_t>(t) * r + static_cast<std::size_t>(b)];
      if (g.visitor(b, t) != k) problems.push_back(fmt::format("visitor({}, {}) is not ring rank {}", b, t, k));
    }
  }
  for (std::size_t x = 0; x < r * r; ++x) {
    if (by_rank[x] != 1)
      problems.push_back(fmt::format("ring rank {} sees block {} {} times", x / r, x % r, by_rank[x]));
    if (by_step[x] != 1)
      problems.push_back(fmt::format("at step {} block {} is held {} times", x / r, x % r, by_step[x]));
  }
  return problems;
}

std::vector<RingOrder> ring_orders(const RingGeometry& g) {
  std::vector<RingOrder> rings;
  for (int j = 0; j < g.ulysses; ++j) {
    if (g.outer == 1) {
      RingOrder ring{"flat", j, {}};
      for (int k = 0; k < g.ring; ++k) ring.order.push_back(g.world_rank(k, j));
      rings.push_back(std::move(ring));
      continue;
    }
    for (int n = 0; n < g.outer; ++n) {
      RingOrder ring{"intra", j, {}};
      for (int l = 0; l < g.inner; ++l) ring.order.push_back(g.world_rank(n * g.inner + l, j));
      rings.push_back(std::move(ring));
    }
    for (int l = 0; l < g.inner; ++l) {
      RingOrder ring{"inter", j, {}};
      for (int n = 0; n < g.outer; ++n) ring.order.push_back(g.world_rank(n * g.inner + l, j));
      rings.push_back(std::move(ring));
    }
  }
  return rings;
}

}  // namespace burst::sim
