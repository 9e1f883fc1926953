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
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

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

}  // namespace burst::rt
