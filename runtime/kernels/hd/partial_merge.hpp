// Merging two partials of one query row, for the CPU and the GPU alike.
//
// Partials (o, lse) and (o_i, lse_i) over disjoint key sets combine into the attention over
// the union: the mass is exp(lse) + exp(lse_i), so
//   lse' = log(exp(lse) + exp(lse_i)) = lse - logsigmoid(lse - lse_i)
//   o'   = (exp(lse) o + exp(lse_i) o_i) / exp(lse') = o - sigmoid(lse_i - lse) (o - o_i)
// Written with sigmoid / logsigmoid no exponential of an lse is formed, so nothing overflows
// however large the scores. An empty partial (lse = -inf, o = 0) must leave the other
// untouched, and the formulas would compute -inf - -inf = NaN: merge_partials() names those
// cases instead (empty incoming: keep the accumulator; empty accumulator: take the incoming
// partial exactly), and merged_value() applies the verdict to each element of the row.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "runtime/kernels/hd/math.hpp"

namespace burst::rt::hd {

BURST_HOST_DEVICE inline float log_sigmoid(float x) {
  return x >= 0.0f ? -log1p_of(exp_of(-x)) : x - log1p_of(exp_of(x));
}

enum class MergeKind : std::uint8_t { KeepAccumulator, TakeIncoming, Blend };

struct PartialMerge {
  MergeKind kind = MergeKind::KeepAccumulator;
  float weight = 0.0f;  // Blend: o' = o - weight (o - o_i)
  float lse = kNegInf;  // the merged lse
};

BURST_HOST_DEVICE inline PartialMerge merge_partials(float lse, float lse_i) {
  if (lse_i == kNegInf) return {MergeKind::KeepAccumulator, 0.0f, lse};
  if (lse == kNegInf) return {MergeKind::TakeIncoming, 1.0f, lse_i};
  return {MergeKind::Blend, sigmoid(lse_i - lse), lse - log_sigmoid(lse - lse_i)};
}

BURST_HOST_DEVICE inline float merged_value(const PartialMerge& merge, float o, float o_i) {
  switch (merge.kind) {
    case MergeKind::KeepAccumulator: return o;
    case MergeKind::TakeIncoming: return o_i;
    case MergeKind::Blend: break;
  }
  return o - merge.weight * (o - o_i);
}

}  // namespace burst::rt::hd
