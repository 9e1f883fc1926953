// bfloat16: the top 16 bits of an IEEE fp32 (1 sign, 8 exponent, 7 mantissa bits), so it has
// fp32's range and about 3 significant decimal digits. What a bf16 plan sends over the rings
// and keeps between forward and backward; softmax statistics and accumulators stay fp32.
//
// Rounding is to nearest, ties to even, as tensor-core conversions (cvt.rn.bf16.f32) and
// PyTorch's .to(torch.bfloat16) do: add 0x7FFF plus the lowest kept bit, then truncate. NaN
// stays NaN (a quiet NaN with the sign kept), infinities stay infinite, and a value that
// rounds past the largest finite bf16 becomes infinity, as IEEE rounding says.
//
// One header for the host and the device: g++ compiles it for the CPU runtime and its tests,
// nvcc for the kernels, so both round the same way (BURST_HOST_DEVICE, common/host_device.hpp).
#pragma once

#include <cstdint>
#include <cstring>

#include "common/host_device.hpp"

namespace burst {

struct Bf16 {
  std::uint16_t bits = 0;
  friend bool operator==(const Bf16&, const Bf16&) = default;
};

BURST_HOST_DEVICE inline std::uint32_t float_bits(float x) {
  std::uint32_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

BURST_HOST_DEVICE inline float float_from_bits(std::uint32_t u) {
  float x = 0;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

BURST_HOST_DEVICE inline Bf16 to_bf16(float x) {
  const std::uint32_t u = float_bits(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u)
    return Bf16{static_cast<std::uint16_t>((u >> 16) | 0x0040u)};  // NaN: keep it quiet
  const std::uint32_t rounding = 0x7FFFu + ((u >> 16) & 1u);
  return Bf16{static_cast<std::uint16_t>((u + rounding) >> 16)};
}

BURST_HOST_DEVICE inline float to_float(Bf16 b) { return float_from_bits(static_cast<std::uint32_t>(b.bits) << 16); }

// x rounded to the nearest bf16 and back: what survives a trip through bf16 storage.
BURST_HOST_DEVICE inline float round_to_bf16(float x) { return to_float(to_bf16(x)); }

// Half the gap between 1 and the next bf16 (2^-8): the largest relative error of one rounding.
inline constexpr float kBf16UnitRoundoff = 0.00390625f;

}  // namespace burst
