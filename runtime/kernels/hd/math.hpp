// The few math functions the shared host/device headers need, spelled once for both compilers:
// the host pass calls <cmath>, the device pass CUDA's libdevice functions of the same name
// (expf and logf are within 2 ulp of the correctly rounded result, log1pf within 1 ulp).
// kNegInf is the lse of a row with no allowed key, and the running maximum's start.
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

BURST_HOST_DEVICE inline float log_of(float x) {
#if defined(__CUDA_ARCH__)
  return ::logf(x);
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

}  // namespace burst::rt::hd
