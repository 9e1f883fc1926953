// What a framework's nearest equivalent would cost: the plan's job on the plan's own cluster
// (its /cluster document) under another strategy, simulated as the planner scores a candidate
// (the whole-iteration model over one simulated attention layer, default cost models), and the
// plan's own strategy simulated the same way, so the two figures compare like with like.
#pragma once

#include <optional>
#include <string>

#include "plan/plan.hpp"
#include "simulator/training/training.hpp"

namespace burst::exporter {

struct Predicted {
  bool runs = false;   // the strategy applies to this job and cluster
  bool fits = false;   // and its memory per GPU is within the plan's budget
  std::string reason;  // why it does not run or fit ("" when it does)
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double memory_bytes = 0;  // per GPU
};

// Throws burst::Error when the plan carries no cluster document to simulate on. `linears`: the
// linear layers' precision it runs, where it is not the plan's own (a framework without FP8);
// `fp8_library`: the library FP8 linears run on (the plan prices TransformerEngine's).
// `allocates_like`: the family whose allocation (FrameworkMemory) to cost the memory with, as
// that framework allocates; empty: the strategy's own.
[[nodiscard]] Predicted predict_strategy(const plan::Plan& plan, const plan::Strategy& strategy,
                                         const std::string& source, const std::string& allocates_like = "",
                                         std::optional<sim::LinearPrecision> linears = std::nullopt,
                                         sim::Fp8Library fp8_library = sim::Fp8Library::TransformerEngine);

}  // namespace burst::exporter
