// Ring orders: who computes with whose block at every step.
//
// World rank g in 0..P-1 (P = nodes x gpus per node). Ulysses groups are U consecutive world
// ranks, inside one node (U divides the GPUs per node) or spanning whole nodes (DeepSpeed-
// Ulysses over the whole world). Group k is ring rank k, so there are R = P / U ring ranks;
// member j of every group forms its own ring over the groups: U rings of R ranks, each for
// H/U heads, all running the same schedule on the same tokens.
//
// The geometry of a ring (which block each ring rank holds at each step) is in
// common/ring_geometry.hpp: the runtime follows the same schedule.
//
// Every rank sees every block exactly once and every step is a permutation: check_ring()
// verifies both, and that every world rank sits in exactly one ring once.
#pragma once

#include <string>
#include <vector>

#include "common/ring_geometry.hpp"
#include "simulator/attention/attention.hpp"

namespace burst::sim {

using burst::RingGeometry;

// The shape of the world a strategy runs on (all the lowering needs of a topology).
struct World {
  int nodes = 0;
  int gpus_per_node = 0;
  [[nodiscard]] int size() const { return nodes * gpus_per_node; }
};
[[nodiscard]] World world_of(const topo::Topology& topology);
// The context-parallel world of one data-parallel replica beside tensor parallelism of `tp`:
// every node's GPUs divided by tp, and the world divided by `dp`, either into whole nodes
// (dp divides the nodes) or into equal parts of one node (dp a multiple of the nodes whose
// share of a node divides its G / tp ranks). An empty world (0 GPUs per node) when neither.
[[nodiscard]] World replica_world(const topo::Topology& topology, int tp, int dp);
// The world one copy of an attention layer runs on: replica_world of the shape's
// tensor_parallel and data_parallel (check_applicable says when they do not divide the cluster).
[[nodiscard]] World attention_world(const AttentionShape& shape, const topo::Topology& topology);
// The topology GPU of rank `rank` of copy `copy` (0 .. tp x dp - 1: tensor-parallel rank
// copy % tp of replica copy / tp) in a replica of `replica_ranks` ranks: tp (replica x
// replica_ranks + rank) + copy % tp. Tensor parallelism is innermost, replicas outermost.
[[nodiscard]] int topology_gpu(int tensor_parallel, int replica_ranks, int rank, int copy);

// Ring ranks per node for a Ulysses degree (1 when a Ulysses group spans nodes).
[[nodiscard]] int ring_ranks_per_node(int ulysses, const World& world);
// The geometry of a strategy that check_applicable() accepts.
[[nodiscard]] RingGeometry ring_geometry(const AttentionStrategy& strategy, const World& world);
// The ring levels that exist, by their ranks: a flat ring's one; a double ring's inner (within
// a node) and outer (across nodes) ring, each where it has more than one rank. Each level keeps
// its own blocks in flight and its own communicators.
[[nodiscard]] std::vector<int> ring_level_sizes(const RingGeometry& geometry);

// Problems with a geometry's schedule or rank mapping, one line each; empty when every ring
// visits every rank exactly once.
[[nodiscard]] std::vector<std::string> check_ring(const RingGeometry& geometry);

// The rings as world-rank orders, for plans and traces: level "flat" (one per Ulysses member),
// or "intra" (one per outer position) and "inter" (one per inner position) for a double ring.
struct RingOrder {
  std::string level;
  int member = 0;  // Ulysses member j the ring belongs to
  std::vector<int> order;
};
[[nodiscard]] std::vector<RingOrder> ring_orders(const RingGeometry& geometry);

}  // namespace burst::sim
