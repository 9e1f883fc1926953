// A hand-made plan of `world` ranks on one flat ring (inner == world) or a double ring of
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

}  // namespace burst::test
