// Comparing two simulations of one attention layer figure by figure, for the tests of the
// simulator's reductions (one copy for all, a ring folded onto one window): a reduction that
// holds must give the same times, FLOPs and bytes as simulating everything.
#pragma once

#include <catch2/catch.hpp>

#include "simulator/layer_simulation.hpp"
#include "topologies/load.hpp"

namespace burst::test {

// A layer of 32 heads (8 KV heads) of 128 under tensor parallelism `tp` and `dp` replicas.
inline sim::AttentionShape attention_shape(int tp, int dp, std::int64_t seq) {
  sim::AttentionShape s;
  s.heads = 32 / tp;
  s.kv_heads = 8 / tp;
  s.head_dim = 128;
  s.seq = seq;
  s.tensor_parallel = tp;
  s.data_parallel = dp;
  return s;
}

inline topo::Topology nodes_of(const char* preset, int nodes) {
  topo::LoadOptions options;
  options.nodes = nodes;
  return topo::load_topology(preset, options);
}

// Every figure of `a` equals `b`'s; `imbalance`: compare the imbalance too (a folded ring under a
// causal mask estimates it from the kernels alone).
inline void same_phase(const sim::PhaseFigures& a, const sim::PhaseFigures& b, bool imbalance = true) {
  CHECK(a.time_s == Approx(b.time_s).epsilon(1e-12));
  CHECK(a.compute_max_s == Approx(b.compute_max_s).epsilon(1e-12));
  CHECK(a.exposed_comm_s == Approx(b.exposed_comm_s).margin(1e-15).epsilon(1e-9));
  if (imbalance) CHECK(a.imbalance == Approx(b.imbalance).epsilon(1e-12));
  CHECK(a.flops_total == Approx(b.flops_total).epsilon(1e-12));
  CHECK(a.bytes_per_rank == Approx(b.bytes_per_rank).epsilon(1e-12));
  CHECK(a.bytes_per_rank_max == Approx(b.bytes_per_rank_max).epsilon(1e-12));
  for (std::size_t k = 0; k < a.bytes_per_rank_by_class.size(); ++k)
    CHECK(a.bytes_per_rank_by_class[k] == Approx(b.bytes_per_rank_by_class[k]).epsilon(1e-12));
  for (std::size_t k = 0; k < a.link_bytes_per_rank.size(); ++k)
    CHECK(a.link_bytes_per_rank[k] == Approx(b.link_bytes_per_rank[k]).epsilon(1e-12));
}

}  // namespace burst::test
