// Hand-made plans for the runtime's tests. ring_plan: `world` ranks on one flat ring (inner == world) or a double ring of
// inner x world / inner, for the runtime's MPI tests: only what the runtime reads is filled
// (model dimensions, sequence, mask, strategy, ranks, rings).
#pragma once

#include <string>

#include "planner/contract/plan.hpp"

namespace burst::test {

inline plan::Plan ring_plan(int world, int inner, Layout layout, BackwardMode backward, const std::string& mask,
                            int heads, int kv_heads, int head_dim, std::int64_t seq) {
  plan::Plan p;
  p.job.model.name = "test";
  p.job.model.layers = 1;
  p.job.model.heads = heads;
  p.job.model.kv_heads = kv_heads;
  p.job.model.head_dim = head_dim;
  p.job.model.hidden = heads * head_dim;
  p.job.seq = seq;
  p.job.mask = parse_mask(mask, "mask");
  p.strategy.name = "burst";
  p.strategy.cp = world;
  p.strategy.ring = inner < world ? RingKind::Double : RingKind::Flat;
  p.strategy.inner = inner;
  p.strategy.outer = world / inner;
  p.strategy.layout = layout;
  p.strategy.backward = backward;
  for (int r = 0; r < world; ++r) p.ranks.push_back({r, r / inner, r % inner});
  if (inner == world) {
    plan::Ring flat{"flat", 0, {}};
    for (int r = 0; r < world; ++r) flat.order.push_back(r);
    p.rings.push_back(flat);
  } else {
    for (int n = 0; n < world / inner; ++n) {
      plan::Ring ring{"intra", 0, {}};
      for (int l = 0; l < inner; ++l) ring.order.push_back(n * inner + l);
      p.rings.push_back(ring);
    }
    for (int l = 0; l < inner; ++l) {
      plan::Ring ring{"inter", 0, {}};
      for (int n = 0; n < world / inner; ++n) ring.order.push_back(n * inner + l);
      p.rings.push_back(ring);
    }
  }
  return p;
}

// The plan for the training runtime's tests: a small Llama-style model (2 layers, hidden 32,
// FFN 48, 4 heads sharing 2 KV heads of `head_dim`, a 300-token vocabulary over the 256 bytes)
// on `tokens_per_rank` tokens a rank, with the given checkpoint policy and LM-head chunks.
inline plan::Plan training_plan(int world, int inner, Layout layout, BackwardMode backward, CheckpointPolicy policy,
                                double kept, int chunks, const std::string& mask = "causal", int head_dim = 8,
                                std::int64_t tokens_per_rank = 16) {
  plan::Plan p = ring_plan(world, inner, layout, backward, mask, 4, 2, head_dim, tokens_per_rank * world);
  ModelSpec& m = p.job.model;
  m.layers = 2;
  m.hidden = 32;
  m.ffn = 48;
  m.vocab = 300;
  m.gated_mlp = true;
  m.activation = "silu";
  p.strategy.checkpoint = policy;
  p.strategy.kept_fraction = kept;
  p.strategy.lm_head_chunks = chunks;
  return p;
}

}  // namespace burst::test
