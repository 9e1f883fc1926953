// One parameter's AdamW update, for the CPU optimizer and the CUDA kernel alike (the math is
// adamw.hpp's):
//   g' = g c                                   (c: the clip factor of the global norm)
//   m = b1 m + (1 - b1) g',   v = b2 v + (1 - b2) g'^2
//   p = p - lr ((m / k1) / (sqrt(v / k2) + eps) + wd p),   k_i = 1 - b_i^step
// The step's scalars are worked out once (adamw_scalars, in double) and the element update
// runs in T: double on the CPU (its long-standing results), float on the GPU. m, v and p are
// stored as float either way; the update uses the unrounded m and v.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "runtime/kernels/hd/math.hpp"

namespace burst::rt::hd {

template <typename T>
struct AdamWScalars {
  T lr = 0;
  T beta1 = 0;
  T beta2 = 0;
  T eps = 0;
  T decay = 0;        // weight decay, 0 for a group that does not decay
  T correction1 = 1;  // 1 - beta1^step
  T correction2 = 1;  // 1 - beta2^step
};

// The scalars of step `step` (1, 2, ...).
template <typename T>
BURST_HOST_DEVICE inline AdamWScalars<T> adamw_scalars(double lr, double beta1, double beta2, double eps, double decay,
                                                       std::int64_t step) {
  const auto t = static_cast<double>(step);
  return {static_cast<T>(lr),
          static_cast<T>(beta1),
          static_cast<T>(beta2),
          static_cast<T>(eps),
          static_cast<T>(decay),
          static_cast<T>(1.0 - pow_of(beta1, t)),
          static_cast<T>(1.0 - pow_of(beta2, t))};
}

// clip_norm / norm where the global gradient norm exceeds clip_norm > 0, else 1.
BURST_HOST_DEVICE inline float adamw_clip_factor(double norm, float clip_norm) {
  return clip_norm > 0.0f && norm > clip_norm ? static_cast<float>(clip_norm / norm) : 1.0f;
}

struct AdamWElement {
  float param = 0.0f;
  float m = 0.0f;
  float v = 0.0f;
};

// The update of one parameter given its clipped gradient.
template <typename T>
BURST_HOST_DEVICE inline AdamWElement adamw_element(const AdamWScalars<T>& s, float clipped_grad, AdamWElement old) {
  const T g = clipped_grad;
  const T m = s.beta1 * old.m + (T(1) - s.beta1) * g;
  const T v = s.beta2 * old.v + (T(1) - s.beta2) * g * g;
  const T p = old.param;
  const T step = s.lr * ((m / s.correction1) / (sqrt_of(v / s.correction2) + s.eps) + s.decay * p);
  return {static_cast<float>(p - step), static_cast<float>(m), static_cast<float>(v)};
}

}  // namespace burst::rt::hd
