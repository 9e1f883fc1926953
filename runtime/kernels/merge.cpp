// Merging ring-step partials, and D = rowsum(O * dO) for the backward.
//
// The merge of two partials of one row (sigmoid / logsigmoid form, -inf cases named) is the
// shared host/device one of hd/partial_merge.hpp, which states the math; the CUDA merge kernel
// runs the same function per row.
#include "runtime/kernels/checks.hpp"
#include "runtime/kernels/hd/partial_merge.hpp"

namespace burst::rt {

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
      const hd::PartialMerge merge = hd::merge_partials(lse[at], lse_i[at]);
      if (merge.kind == hd::MergeKind::KeepAccumulator) continue;
      float* acc = o.row(t, h);
      const float* part = o_i.row(t, h);
      for (std::int64_t c = 0; c < d; ++c) acc[c] = hd::merged_value(merge, acc[c], part[c]);
      lse[at] = merge.lse;
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
