// Lowering a plan's attention to count its ring bytes (see plan_traffic.hpp).
#include "planner/plan_traffic.hpp"

#include <algorithm>

#include "planner/plan_builder.hpp"
#include "simulator/attention/lowering.hpp"

namespace burst::planner {

RingTraffic simulated_ring_traffic(const plan::Plan& plan, const AttentionDims& dims) {
  const plan::Strategy& s = plan.strategy;
  // One replica's layer on one sequence, as an attention run measures it (every replica of a
  // data-parallel plan runs the same at once).
  const int world = static_cast<int>(plan.ranks.size()) / std::max(1, s.dp * s.tp);
  const bool double_ring = s.ring == RingKind::Double;
  const int per_node = double_ring ? s.inner * s.ulysses : world;
  const sim::World w{world / per_node, per_node};
  const sim::AttentionShape shape{
      dims.heads, dims.kv_heads, dims.head_dim, dims.seq, 1, plan.job.dtype == "fp32" ? 4 : 2};
  const sim::AttentionStrategy strategy = attention_strategy(s);
  const sim::LoweredAttention lowered = sim::lower_attention(shape, plan.job.mask, strategy, w);
  RingTraffic bytes{};
  for (std::size_t phase = 0; phase < 2; ++phase) {
    for (const sim::Task& t : (phase == 0 ? lowered.forward : lowered.backward).tasks()) {
      if (t.kind != sim::TaskKind::Transfer || t.payload == sim::Payload::AllToAll) continue;
      const std::size_t level = !double_ring ? 0 : t.gpu / per_node == t.peer / per_node ? 1 : 2;
      bytes[phase][level] += t.amount / world;
    }
  }
  return bytes;
}

}  // namespace burst::planner
