// One row's online softmax, the step both forward kernels (CPU and GPU) take per key tile.
//
// A row keeps its running maximum m, the sum l = sum exp(s - m) and an unnormalised output
// acc = sum exp(s - m) v. A tile whose (masked) scores have maximum tile_max moves the maximum
// to m' = max(m, tile_max); the old terms are rescaled by alpha = exp(m - m') and the tile's
// scores enter as p = exp(s - m'):
//   l' = alpha l + sum p,   acc' = alpha acc + sum p v
// -inf handling: a masked score is -inf. A row that has seen no allowed key keeps m = -inf
// (m' = -inf: every p of the tile must be taken as 0, nothing is rescaled, alpha = 1); the first
// allowed key gives m' finite and alpha = exp(-inf) = 0, which clears nothing since acc = 0.
// At the end O = acc / l and lse = m + log l; a row that never saw an allowed key has l = 0
// and ends as O = 0, lse = -inf (never +inf: the empty partial that merging ignores).
//
// The exponential is a parameter: the CPU passes its vectorisable fast_exp, the GPU its
// ex2.approx-based one; both map -inf to exactly 0. The backward's p = exp(s - lse) uses the
// FINAL lse and is 0 for a row with lse = -inf (no allowed key anywhere: no gradient).
#pragma once

#include "common/host_device.hpp"
#include "runtime/kernels/hd/math.hpp"

namespace burst::rt::hd {

struct SoftmaxStep {
  float max = kNegInf;  // m'
  float alpha = 1.0f;   // exp(m - m'): the factor on l and acc
  [[nodiscard]] BURST_HOST_DEVICE constexpr bool row_is_empty() const { return max == kNegInf; }
};

template <typename Exp>
BURST_HOST_DEVICE inline SoftmaxStep online_softmax_step(float running_max, float tile_max, Exp exp) {
  const float m = running_max > tile_max ? running_max : tile_max;
  if (m == kNegInf) return {m, 1.0f};
  return {m, exp(running_max - m)};
}

// p of one score in a tile whose step gave `step` (0 for a row that is still empty).
template <typename Exp>
BURST_HOST_DEVICE inline float tile_probability(float score, const SoftmaxStep& step, Exp exp) {
  return step.row_is_empty() ? 0.0f : exp(score - step.max);
}

// The end of a row: 1 / l (0 when l = 0) and lse = m + log l (-inf when l = 0).
struct RowEnd {
  float inv_sum = 0.0f;
  float lse = kNegInf;
};

BURST_HOST_DEVICE inline RowEnd finish_row(float max, float sum) {
  if (!(sum > 0.0f)) return {};
  return {1.0f / sum, max + log_of(sum)};
}

// The backward's p = exp(s - lse) from the final lse of the row.
template <typename Exp>
BURST_HOST_DEVICE inline float probability_from_lse(float score, float lse, Exp exp) {
  return lse == kNegInf ? 0.0f : exp(score - lse);
}

}  // namespace burst::rt::hd
