// The nearest thing a framework can run to a plan: the plan's strategy with every knob the
// framework lacks replaced by the closest one it has (framework.hpp lists what each has).
//
// The rules, knob by knob, in the plan's own terms:
//   attention   Ulysses x ring as asked when the framework has both; without the hybrid, a
//               flat ring over every rank (it runs any head count), else Ulysses over every
//               rank; a double ring becomes a flat ring of the same ranks;
//   layout      the framework's default layout of the ring (zigzag everywhere we export to);
//   backward    the framework's backward (K,V ring: dK,dV travel with K,V);
//   precision   the travelling dK,dV in the job's dtype (what the frameworks send);
//   overlap     on (every framework double-buffers its ring);
//   checkpoint  seq_stash -> attn_stash where the framework keeps attention outputs, else
//               full; attn_stash -> full; none and full everywhere;
//   lm_head     unfused where the framework has no chunked LM head;
//   zero        the nearest stage it has, preferring more sharding (never more memory);
//   offload     off where it cannot offload the optimizer;
//   linears     FP8 GEMMs where the framework has them, else the job's dtype; FP8 on the
//               framework's library, a deviation where that is not TransformerEngine's.
// Each replacement is a Deviation naming what the plan asked, what is written and why.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "planner/export/framework.hpp"
#include "simulator/training/training.hpp"

namespace burst::exporter {

struct Deviation {
  Knob knob;
  std::string asked;    // "q_ring", "double ring 8x4", "seq_stash (kept 0.50)"
  std::string written;  // "kv_ring", "flat ring of 32", "full"
  std::string why;      // the framework's reason (Framework::why_not)
};

struct Equivalent {
  plan::Strategy strategy;                                           // what the framework runs, in the plan's terms
  sim::LinearPrecision linears = sim::LinearPrecision::Bf16;         // and its linear layers' (plan /job/linears)
  sim::Fp8Library fp8_library = sim::Fp8Library::TransformerEngine;  // which runs them, when FP8
  std::vector<Deviation> deviations;                                 // empty: it runs the plan as it is
};

[[nodiscard]] Equivalent nearest_equivalent(const plan::Plan& plan, const Framework& framework);

// "Ulysses 2 x flat ring of 2", "flat ring of 32", "double ring 8x4", "Ulysses 32", "1 rank".
[[nodiscard]] std::string describe_attention(const plan::Strategy& strategy);

}  // namespace burst::exporter
