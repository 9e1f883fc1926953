// Merging ring-step partials, and D = rowsum(O * dO) for the backward.
//
// Two partials of one query row over disjoint key sets, (o, lse) and (o_i, lse_i), combine
// into the attention over the union: the total mass is exp(lse) + exp(lse_i), so
//   lse' = log(exp(lse) + exp(lse_i)) = lse - logsigmoid(lse - lse_i)
//   o'   = (exp(lse) o + exp(lse_i) o_i) / exp(lse') = o - sigmoid(lse_i - lse) (o - o_i)
// Written with sigmoid / logsigmoid no exponential of an lse is ever formed, so nothing
// overflows however large the scores. An empty partial (lse = -inf, o = 0) must leave the
// other untouched, and the formulas would compute -inf - -inf = NaN: both cases are handled
// before them (empty incoming: nothing to do; empty accumulator: take the incoming one).
#include <cmath>
#include <limits>

#include "runtime/kernels/checks.hpp"

namespace burst::rt {
namespace {


float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float log_sigmoid(float x) { return x >= 0 ? -std::log1p(std::exp(-x)) : x - std::log1p(std::exp(x)); }

}  // namespace

void merge_partial(View o, std::span<float> lse, ConstView o_i, std::span<const float> lse_i) {
  Problems problems;
  check_shape(problems, "merge_partial", "o_i", o_i.shape, o.shape, "o");
  check_row_scalars(problems, "merge_partial", "lse", lse.size(), o.shape);
  check_row_scalars(problems, "merge_partial", "lse_i", lse_i.size(), o.shape);
  problems.throw_if_any();

  const std::int64_t d = o.shape.head_dim;
  for (std::int64_t t = 0; t < o.shape.tokens; ++t) {
    for (std::int64_t h = 0; h < o.shape.heads; ++h) {
      const auto at = static_cast<std::size_t>(t * o.shape.heads + h);
      if (lse_i[at] == kNegInf) continue;
      float* acc = o.row(t, h);
      const float* part = o_i.row(t, h);
      if (lse[at] == kNegInf) {
        std::copy(part, part + d, acc);
        lse[at] = lse_i[at];
        continue;
      }
      const float w = sigmoid(lse_i[at] - lse[at]);
      for (std::int64_t c = 0; c < d; ++c) acc[c] -= w * (acc[c] - part[c]);
      lse[at] -= log_sigmoid(lse[at] - lse_i[at]);
    }
  }
}

void attention_delta(ConstView o, ConstView d_o, std::span<float> delta) {
  Problems problems;
  check_shape(problems, "attention_delta", "d_o", d_o.shape, o.shape, "o");
  check_row_scalars(problems, "attention_delta", "delta", delta.size(), o.shape);
  problems.throw_if_any();

  const std::int64_t d = o.shape.head_dim;
  for (std::int64_t t = 0; t < o.shape.tokens; ++t) {
    for (std::int64_t h = 0; h < o.shape.heads; ++h) {
      const float* a = o.row(t, h);
      const float* b = d_o.row(t, h);
      float sum = 0;
      for (std::int64_t c = 0; c < d; ++c) sum += a[c] * b[c];
      delta[static_cast<std::size_t>(t * o.shape.heads + h)] = sum;
    }
  }
}

}  // namespace burst::rt
