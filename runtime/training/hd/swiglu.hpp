// SwiGLU's per-element arithmetic, for the CPU layer op and the CUDA kernels alike:
//   m = silu(u) w,  silu(u) = u s(u),  s the logistic sigmoid
//   dw = dm silu(u),  du = dm w s(u) (1 + u (1 - s(u)))
// all in float (the sigmoid of runtime/kernels/hd/math.hpp).
#pragma once

#include "common/host_device.hpp"
#include "runtime/kernels/hd/math.hpp"

namespace burst::rt::hd {

BURST_HOST_DEVICE inline float swiglu_value(float u, float w) { return u * sigmoid(u) * w; }

struct SwigluGrad {
  float du = 0.0f;
  float dw = 0.0f;
};

BURST_HOST_DEVICE inline SwigluGrad swiglu_grad(float u, float w, float dm) {
  const float s = sigmoid(u);
  return {dm * w * s * (1.0f + u * (1.0f - s)), dm * u * s};
}

}  // namespace burst::rt::hd
