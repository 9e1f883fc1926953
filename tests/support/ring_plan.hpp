// Hand-made plans for the runtime's tests: only what the runtime reads is filled (model
// dimensions, sequence, mask, strategy, ranks, rings).
//
// usp_plan: `world` ranks in Ulysses groups of `ulysses` consecutive ranks around rings of
// world / ulysses ring ranks, one flat ring (inner == ring size) or a double ring of inner x
// (ring / inner) per member, member j's ring rank k being world rank k * ulysses + j, as the
// planner lays them out. ring_plan is the plain ring (ulysses 1). The plans are fp32 throughout
// (tensors and travelling accumulators), so results compare with the fp32 references exactly;
// the bf16 tests set the precision fields themselves.
#pragma once

#include <string>

#include "plan/plan.hpp"

namespace burst::test {

inline plan::Plan usp_plan(int world, int ulysses, int inner, Layout layout, BackwardMode backward,
                           const std::string& mask, int heads, int kv_heads, int head_dim, std::int64_t seq) {
  plan::Plan p;
  p.job.model.name = "test";
  p.job.model.layers = 1;
  p.job.model.heads = heads;
  p.job.model.kv_heads = kv_heads;
  p.job.model.head_dim = head_dim;
  p.job.model.hidden = heads * head_dim;
  p.job.seq = seq;
  p.job.mask = parse_mask(mask, "mask");
  p.job.dtype = "fp32";
  p.strategy.dq_bytes = p.strategy.dkv_bytes = 4;
  const int ring = world / ulysses;
  p.strategy.name = ulysses == 1 ? "burst" : ring == 1 ? "ds-ulysses" : "burst-usp";
  p.strategy.cp = ring;
  p.strategy.ulysses = ulysses;
  p.strategy.ring = inner < ring ? RingKind::Double : RingKind::Flat;
  p.strategy.inner = inner;
  p.strategy.outer = ring / inner;
  p.strategy.layout = layout;
  p.strategy.backward = backward;
  const int per_node = inner * ulysses;
  for (int r = 0; r < world; ++r) p.ranks.push_back({r, r / per_node, r % per_node});
  const auto at = [&](int k, int j) { return k * ulysses + j; };
  for (int j = 0; j < ulysses; ++j) {
    if (inner == ring) {
      plan::Ring flat{"flat", j, {}};
      for (int k = 0; k < ring; ++k) flat.order.push_back(at(k, j));
      p.rings.push_back(flat);
      continue;
    }
    for (int n = 0; n < ring / inner; ++n) {
      plan::Ring intra{"intra", j, {}};
      for (int l = 0; l < inner; ++l) intra.order.push_back(at(n * inner + l, j));
      p.rings.push_back(intra);
    }
    for (int l = 0; l < inner; ++l) {
      plan::Ring inter{"inter", j, {}};
      for (int n = 0; n < ring / inner; ++n) inter.order.push_back(at(n * inner + l, j));
      p.rings.push_back(inter);
    }
  }
  return p;
}

inline plan::Plan ring_plan(int world, int inner, Layout layout, BackwardMode backward, const std::string& mask,
                            int heads, int kv_heads, int head_dim, std::int64_t seq) {
  return usp_plan(world, 1, inner, layout, backward, mask, heads, kv_heads, head_dim, seq);
}

// The plan for the training runtime's tests: a small Llama-style model (2 layers, hidden 32,
// FFN 48, 4 heads sharing 2 KV heads of `head_dim`, a 300-token vocabulary over the 256 bytes)
// on `tokens_per_rank` tokens a rank, with the given checkpoint policy and LM-head chunks, on
// rings of `inner` (Ulysses degree 1) or Ulysses groups of `ulysses` around rings of `inner`.
inline plan::Plan training_plan(int world, int inner, Layout layout, BackwardMode backward, CheckpointPolicy policy,
                                double kept, int chunks, const std::string& mask = "causal", int head_dim = 8,
                                std::int64_t tokens_per_rank = 16, int ulysses = 1) {
  plan::Plan p = usp_plan(world, ulysses, inner, layout, backward, mask, 4, 2, head_dim, tokens_per_rank * world);
  ModelSpec& m = p.job.model;
  m.layers = 2;
  m.hidden = 32;
  m.ffn = 48;
  m.vocab = 300;
  m.gated_mlp = true;
  m.activation = "silu";
  p.strategy.checkpoint.policy = policy;
  p.strategy.checkpoint.kept_fraction = kept;
  p.strategy.lm_head_chunks = chunks;
  return p;
}

// The same plan with tensor parallelism of `tp` inside it: each rank r becomes the tp consecutive
// ranks r tp .. r tp + tp - 1 of one node, and every ring a copy per tensor-parallel rank t over
// the ranks r tp + t, as the planner lays them out (apply data_parallel after it).
inline plan::Plan tensor_parallel(plan::Plan p, int tp) {
  const std::vector<plan::RankPlacement> ranks = p.ranks;
  const std::vector<plan::Ring> rings = p.rings;
  p.ranks.clear();
  p.rings.clear();
  for (const plan::RankPlacement& r : ranks) {
    for (int t = 0; t < tp; ++t) p.ranks.push_back({r.rank * tp + t, r.node, r.local * tp + t});
  }
  for (int t = 0; t < tp; ++t) {
    for (plan::Ring ring : rings) {
      for (int& w : ring.order) w = w * tp + t;
      ring.tp = t;
      p.rings.push_back(ring);
    }
  }
  p.strategy.tp = tp;
  return p;
}

// The same plan as `dp` data-parallel replicas training a global batch of `batch` sequences in
// micro-batches of `micro_batch`: replica d is world ranks d R .. d R + R - 1 (R the plan's
// ranks), each on its own copy of the plan's rings, as the planner lays them out.
inline plan::Plan data_parallel(plan::Plan p, int dp, int batch, int micro_batch) {
  const auto replica = static_cast<int>(p.ranks.size());
  const std::vector<plan::RankPlacement> ranks = p.ranks;
  const std::vector<plan::Ring> rings = p.rings;
  const int nodes = ranks.back().node + 1;
  p.ranks.clear();
  p.rings.clear();
  for (int d = 0; d < dp; ++d) {
    for (const plan::RankPlacement& r : ranks) p.ranks.push_back({d * replica + r.rank, d * nodes + r.node, r.local});
    for (plan::Ring ring : rings) {
      for (int& w : ring.order) w += d * replica;
      ring.dp = d;
      p.rings.push_back(ring);
    }
  }
  p.strategy.dp = dp;
  p.strategy.micro_batch = micro_batch;
  p.job.batch = batch;
  return p;
}

}  // namespace burst::test
