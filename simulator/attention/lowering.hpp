// The attention lowering on a bare World (nodes x GPUs per node), as attention.hpp's
// topology-taking functions see it, plus the closed forms the presets compare.
//
// The lowering needs nothing of a topology but its shape: which ranks share a node decides
// the rings; links and speeds are the engine's business. Tests and what-if sweeps use these
// overloads directly.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "simulator/attention/attention.hpp"
#include "simulator/attention/ring.hpp"

namespace burst::sim {

// Transfer channels (TaskGraph::TransferSpec::channel), one per ring level.
inline constexpr int kChannelInner = 0;        // flat ring, or the inner ring of a double ring
inline constexpr int kChannelOuter = 1;        // outer ring of a double ring
inline constexpr int kChannelAccumulator = 2;  // travelling gradient accumulators: dQ or dK,dV
inline constexpr int kChannelAllToAll = 3;     // Ulysses all-to-all

[[nodiscard]] AttentionStrategy strategy_preset(std::string_view name, const AttentionShape& shape, const World& world);
// Every reason the strategy cannot run the job on this world (empty when it can).
[[nodiscard]] std::vector<Problem> applicability_problems(const AttentionStrategy& strategy,
                                                          const AttentionShape& shape, const Mask& mask,
                                                          const World& world);
[[nodiscard]] std::string check_applicable(const AttentionStrategy& strategy, const AttentionShape& shape,
                                           const Mask& mask, const World& world);
// Whether lower_attention folds the ring onto one window where ring_fold.hpp allows it
// (LoweredAttention::fold), and how it finds the busiest window where windows differ in work:
// by each kernel's seconds (block_seconds, e.g. the compute cost model's), or its FLOPs.
struct FoldOptions {
  bool fold = false;
  std::function<double(const Task&)> block_seconds;
};
[[nodiscard]] LoweredAttention lower_attention(const AttentionShape& shape, const Mask& mask,
                                               const AttentionStrategy& strategy, const World& world,
                                               const FoldOptions& fold = {});

// Bytes one rank sends in the backward ring of one layer when every block makes its full
// journey (full mask, or causal with zigzag/striped), Ulysses all-to-all excluded. With
// c = seq / R tokens per ring rank, h = (heads/U) * head_dim, h_kv = (kv_heads/U) * head_dim,
// e = dtype bytes, b = batch, and R > 1:
//   K,V ring: b*c*[(R-1) * 2*h_kv*e  +  R * 2*h_kv*dkv]      (K,V hops; dK,dV hops incl. home)
//   Q ring:   b*c*[(R-1) * (2*h*e + 8*heads/U)  +  R * h*dq]  (Q, dO, D, lse hops; dQ hops incl. home)
// and 0 for R = 1.
[[nodiscard]] double ring_backward_bytes_per_rank(BackwardMode mode, const AttentionShape& shape,
                                                  const AttentionStrategy& strategy, int ring_size);

}  // namespace burst::sim
