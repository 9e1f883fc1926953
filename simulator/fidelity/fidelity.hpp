// How close the simulator comes to published measurements (docs/fidelity.md, `burst bench
// fidelity`). Each attention figure of published_figures() is rebuilt as a job: the GPU's
// preset node, the source's heads, sequence, batch, mask and layout, and the strategy its
// method names (ring-flash-attention's rings: K,V circulate with fp32 dK,dV; BurstAttention:
// the query side circulates; a single-GPU FlashAttention run: a ring of one). The prediction is
// the layer simulation's forward (or forward + backward) time, and the error is
// predicted / measured - 1.
//
// Two predictions per figure: "now", with the default cost models, and "kernels only", the
// model as it was before it priced what surrounds the kernels (FLOPs at the efficiency of a
// full block of the rank's tokens; no masked curves, no parallelism, no per-step merge or
// accumulation, no launch gaps), so the table shows what each addition bought.
#pragma once

#include <string>
#include <vector>

#include "simulator/cost_model.hpp"
#include "simulator/fidelity/published_figures.hpp"

namespace burst::sim {

struct FidelityRow {
  PublishedFigure figure;
  std::string skipped;  // non-empty: not predicted, and why (no preset for the GPU, ...)
  double tokens_per_gpu = 0;
  double measured_s = 0;  // per iteration
  double kernels_only_s = 0;
  double predicted_s = 0;
  [[nodiscard]] double error() const { return predicted_s / measured_s - 1; }
  [[nodiscard]] double kernels_only_error() const { return kernels_only_s / measured_s - 1; }
};

// The compute model the table compares against (see the head comment).
[[nodiscard]] std::shared_ptr<const ComputeModel> make_kernels_only_model();

// One row per attention figure (attention_kernel and distributed_attention rows timed in
// iterations per second or milliseconds); `models` for "now" (make_cost_models() when empty).
[[nodiscard]] std::vector<FidelityRow> fidelity_rows(const CostModels& models = {});

}  // namespace burst::sim
