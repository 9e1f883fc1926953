// The few math functions the shared host/device headers need, spelled once for both compilers:
// the host pass calls <cmath>, the device pass CUDA's libdevice functions of the same name
// (expf and logf are within 2 ulp of the correctly rounded result, log1pf within 1 ulp; the
// double exp, log, pow within 2 ulp, sqrt and sqrtf correctly rounded).
// kNegInf is the lse of a row with no allowed key, and the running maximum's start.
//
// cos_sin_of differs in more than the spelling: CUDA's sin and cos carry a slow path for huge
// arguments that works in local memory, which the kernels' build forbids, so the device turns
// the angle into half-turns and calls sincospi (whose reduction is exact). The extra rounding
// of angle / pi moves the double results by an ulp or so, far below the float they become.
#pragma once

#include <cmath>
#include <limits>

#include "common/host_device.hpp"

namespace burst::rt::hd {

inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();

BURST_HOST_DEVICE inline float exp_of(float x) {
#if defined(__CUDA_ARCH__)
  return ::expf(x);
#else
  return std::exp(x);
#endif
}

BURST_HOST_DEVICE inline double exp_of(double x) {
#if defined(__CUDA_ARCH__)
  return ::exp(x);
#else
  return std::exp(x);
#endif
}

BURST_HOST_DEVICE inline float log_of(float x) {
#if defined(__CUDA_ARCH__)
  return ::logf(x);
#else
  return std::log(x);
#endif
}

BURST_HOST_DEVICE inline double log_of(double x) {
#if defined(__CUDA_ARCH__)
  return ::log(x);
#else
  return std::log(x);
#endif
}

BURST_HOST_DEVICE inline float log1p_of(float x) {
#if defined(__CUDA_ARCH__)
  return ::log1pf(x);
#else
  return std::log1p(x);
#endif
}

BURST_HOST_DEVICE inline float sqrt_of(float x) {
#if defined(__CUDA_ARCH__)
  return ::sqrtf(x);
#else
  return std::sqrt(x);
#endif
}

BURST_HOST_DEVICE inline double sqrt_of(double x) {
#if defined(__CUDA_ARCH__)
  return ::sqrt(x);
#else
  return std::sqrt(x);
#endif
}

BURST_HOST_DEVICE inline double pow_of(double x, double y) {
#if defined(__CUDA_ARCH__)
  return ::pow(x, y);
#else
  return std::pow(x, y);
#endif
}

struct CosSin {
  double cos = 1.0;
  double sin = 0.0;
};

BURST_HOST_DEVICE inline CosSin cos_sin_of(double angle) {
  CosSin r;
#if defined(__CUDA_ARCH__)
  constexpr double kInvPi = 0.318309886183790671537767526745028724;
  ::sincospi(angle * kInvPi, &r.sin, &r.cos);
#else
  r.cos = std::cos(angle);
  r.sin = std::sin(angle);
#endif
  return r;
}

// The logistic sigmoid 1 / (1 + exp(-x)), in float.
BURST_HOST_DEVICE inline float sigmoid(float x) { return 1.0f / (1.0f + exp_of(-x)); }

}  // namespace burst::rt::hd
