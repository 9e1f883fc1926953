// How close the whole-iteration model comes to published training runs under tensor x context
// x data parallelism (docs/fidelity.md, "Layouts"; `burst bench fidelity --layouts`). Each row
// of published_layouts() is rebuilt as the job it ran: the GPU's preset node (whole nodes only),
// the model preset, the sequence and global batch, and the source's own degrees (TP, DP,
// micro-batch, the family's preset for the rest, whose ring must come out at the source's CP),
// then simulated as `burst simulate`'s iteration would be. The prediction is model TFLOP/s per
// GPU (in the source's own FLOP count where it publishes TFLOP/s, source_flop_count.hpp: its
// FLOPs per token times the predicted tokens/s), tokens/s per GPU and peak memory per GPU; the
// error is predicted / measured - 1 on the source's metric.
//
// A row's precision sets the job's linear layers' (LinearPrecision): the sources' FP8 runs are
// priced with FP8 GEMMs and their casts. What the model does not price is reported, not hidden:
// pipeline parallelism (rows with PP > 1 are skipped, with the reason).
#pragma once

#include <string>
#include <vector>

#include "simulator/cost_model.hpp"
#include "simulator/fidelity/published_layouts.hpp"

namespace burst::sim {

struct LayoutFidelityRow {
  PublishedLayout layout;
  std::string skipped;                  // non-empty: not predicted, and why
  std::string strategy;                 // what was simulated: "megatron-cp: TP 4 x ring 8 x DP 8, full, ZeRO-1"
  double predicted_tflops_per_gpu = 0;  // the source's FLOP count, else the simulation's model FLOPs
  double predicted_tokens_per_s_per_gpu = 0;
  double predicted_memory_gib = 0;
  // The source's metric, predicted; error against the published value.
  [[nodiscard]] double predicted() const;
  [[nodiscard]] double error() const { return predicted() / layout.value - 1; }
};

// One row per published layout; `models` for the prediction (make_cost_models() when empty).
[[nodiscard]] std::vector<LayoutFidelityRow> layout_fidelity_rows(const CostModels& models = {});

}  // namespace burst::sim
