// How a source counts the "model FLOPs" of the TFLOP/s it publishes.
//
// A published TFLOP/s figure is a FLOP count the source chose divided by the step time it
// measured. A prediction compares with it only when divided into the same count, so the layout
// check (layout_fidelity.hpp) predicts such a figure as the source's FLOPs per token times the
// predicted tokens/s: the error is then the step time's error, whatever the count.
//
// NeMo's count (NVIDIA/NeMo nemo/utils/flops_formulas.py @034b17b3, `llama2` and `llama3`), per
// token of a sequence of s tokens, L layers of width h, a of whose heads g are KV groups, an MLP
// of width f, a vocabulary of V:
//
//     L h^2 (12 + 12 g/a + 18 f/h + 12 s/h + 6 V / (L h))
//
// the Q and output projections, K and V, the gated MLP's three matrices (12 f/h for an MLP of
// two, as NeMo's `nemotron` formula counts one), attention's two products over all s positions
// (as if no causal mask halved them) and the logits, each counted 3 times (forward, and the
// backward's two products). Its performance_summary.md prints tokens/s
// beside TFLOP/s for the same runs, and the count turns one into the other: Llama 2 7B at 4K,
// 16634 tokens/s -> 767 TFLOP/s (printed 767); Llama 3 8B at 8K on CP 2, 12036 -> 697 (697). With
// attention halved for the mask they would be 713 and 620.
#pragma once

#include <string>
#include <string_view>

#include "common/model_spec.hpp"

namespace burst::sim {

enum class FlopCount {
  Nemo,  // NeMo's formula above
};

// The name published_layouts.csv's flop_count column gives it: "nemo".
[[nodiscard]] std::string_view to_string(FlopCount count);
// The inverse of to_string. Throws burst::Error naming `where` for anything else.
[[nodiscard]] FlopCount parse_flop_count(const std::string& text, const std::string& where);

// The FLOPs per token that `count` assigns a training step (forward + backward) of `model` on
// sequences of `seq` tokens.
[[nodiscard]] double source_flops_per_token(FlopCount count, const ModelSpec& model, double seq);

}  // namespace burst::sim
