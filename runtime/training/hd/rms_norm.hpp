// The per-element arithmetic of RMSNorm, for the CPU layer op and the CUDA kernels alike.
//
// A row of n features has r = 1 / sqrt(sum_j x_j^2 / n + eps) and y_j = x_j r g_j. Backward,
// given the row's dot = sum_j g_j dy_j x_j:
//   dx_k = r (g_k dy_k - x_k t),  t = r^2 dot / n   (t: the gradient through r)
//   dg_j += dy_j x_j r            (summed over rows)
// The sums (of squares, of the dot's terms, of dg's terms over rows) belong to the caller,
// which picks the order: the CPU adds in row order in double, the GPU reduces in float over a
// block's fixed tree. T is that accumulator type; these functions are the terms and the
// per-row formulas, the same on both sides.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "runtime/kernels/hd/math.hpp"

namespace burst::rt::hd {

// x^2 in T: one term of the row's sum of squares.
template <typename T>
BURST_HOST_DEVICE inline T square_of(float x) {
  return static_cast<T>(x) * x;
}

// r of a row of `dim` features whose squares sum to `sum_squares`.
template <typename T>
BURST_HOST_DEVICE inline float rms_norm_inverse(T sum_squares, std::int64_t dim, float eps) {
  return static_cast<float>(T(1) / sqrt_of(sum_squares / static_cast<T>(dim) + eps));
}

BURST_HOST_DEVICE inline float rms_norm_output(float x, float inv_rms, float gain) { return x * inv_rms * gain; }

// g_j dy_j x_j: one term of the backward's row dot.
template <typename T>
BURST_HOST_DEVICE inline T rms_norm_dot_term(float gain, float dy, float x) {
  return static_cast<T>(gain) * dy * x;
}

// dy_j x_j r: one row's term of dg_j.
template <typename T>
BURST_HOST_DEVICE inline T rms_norm_dgain_term(float dy, float x, T inv_rms) {
  return static_cast<T>(dy) * x * inv_rms;
}

// t = r^2 dot / n.
template <typename T>
BURST_HOST_DEVICE inline T rms_norm_through_rms(T inv_rms, T dot, std::int64_t dim) {
  return inv_rms * inv_rms * dot / static_cast<T>(dim);
}

// dx_k = r (g_k dy_k - x_k t).
template <typename T>
BURST_HOST_DEVICE inline float rms_norm_dx(T inv_rms, T through_rms, float gain, float dy, float x) {
  return static_cast<float>(inv_rms * (static_cast<T>(gain) * dy - x * through_rms));
}

}  // namespace burst::rt::hd
