// AdamW over one flat parameter vector, with global-norm gradient clipping.
//
// Clipping: with n = ||g||_2 over every gradient (summed in double), when clip_norm > 0 and
// n > clip_norm the gradients are scaled in place by clip_norm / n, so their norm becomes
// clip_norm and their direction is kept.
// Then step t = 1, 2, ... (Loshchilov & Hutter's decoupled weight decay, as torch.optim.AdamW):
//   m = beta1 m + (1 - beta1) g,        v = beta2 v + (1 - beta2) g^2
//   m^ = m / (1 - beta1^t),             v^ = v / (1 - beta2^t)        (bias correction)
//   p = p - lr (m^ / (sqrt(v^) + eps) + wd p)
// The decay term lr wd p applies only to the groups that decay: norms' gains (and often the
// embeddings) are excluded, since shrinking them towards 0 changes what the layer computes
// rather than regularising it. Decay is not scaled by the gradient, hence "decoupled".
//
// Groups tile the parameters: their [offset, offset + count) ranges, in any order, must
// cover [0, params.size()) without gaps or overlaps. Bad arguments throw burst::Error.
//
// One implementation for the whole vector and for ZeRO's shards: adamw_update steps any range
// of the flat vector given the GLOBAL gradient norm (a shard computes its squared_norm, the
// ranks sum them, the square root is the norm), clipping that range by the factor the global
// norm gives and applying each group's decay where the group overlaps the range. adamw_step is
// adamw_update over [0, size) with the norm of the whole vector, so a shard's update is, float
// for float, what the whole step does to those floats.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/training/hd/adamw_element.hpp"

namespace burst::rt {

struct AdamWConfig {
  float lr = 3e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;
  float clip_norm = 1.0f;  // <= 0: no clipping
};

// A range of parameters and whether weight decay applies to it.
struct ParamGroup {
  std::size_t offset = 0;
  std::size_t count = 0;
  bool decay = true;
};

// The moments, sized on first use to the parameter count, and the steps taken.
struct AdamWState {
  std::vector<float> m, v;
  std::int64_t step = 0;
};

// Clips grads in place, then takes one step. Returns the gradient norm before clipping.
double adamw_step(std::span<float> params, std::span<float> grads, std::span<const ParamGroup> groups,
                  AdamWState& state, const AdamWConfig& config);

// Sum of the squares in double, in order: a range's share of the squared global norm.
[[nodiscard]] double squared_norm(std::span<const float> grads);

// Parameters [offset, offset + params.size()) of the flat vector, their gradients and moments
// (the same length each): the whole vector, or one piece of a rank's ZeRO shard.
struct AdamWRange {
  std::size_t offset = 0;
  std::span<float> params;
  std::span<float> grads;
  std::span<float> m, v;
};

// The scalars of step `step` for `group` (its weight decay, or none), in T: double on the CPU,
// float for the GPU's kernel.
template <typename T>
[[nodiscard]] hd::AdamWScalars<T> group_scalars(const AdamWConfig& config, const ParamGroup& group, std::int64_t step) {
  return hd::adamw_scalars<T>(config.lr, config.beta1, config.beta2, config.eps,
                              group.decay ? config.weight_decay : 0.0f, step);
}

// fn(group, first, count) for each of `groups`, in order, that overlaps the range
// [offset, offset + n) of the flat vector: elements [first, first + count) of the range lie in it.
template <typename Fn>
void for_each_group_part(std::size_t offset, std::size_t n, std::span<const ParamGroup> groups, Fn&& fn) {
  for (const ParamGroup& group : groups) {
    const std::size_t from = std::max(offset, group.offset), to = std::min(offset + n, group.offset + group.count);
    if (from < to) fn(group, from - offset, to - from);
  }
}

// Step `step` (1, 2, ...) on `range`: clips its gradients in place as the global `norm` says,
// updates m, v and the parameters. `groups` are those of the whole vector.
void adamw_update(const AdamWRange& range, std::span<const ParamGroup> groups, double norm, std::int64_t step,
                  const AdamWConfig& config);

}  // namespace burst::rt
