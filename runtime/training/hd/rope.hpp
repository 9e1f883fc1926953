// The rotary embedding's arithmetic, for the CPU layer op and the CUDA kernels alike.
//
// Pair (i, i + d/2) of a head row of d features at global position p turns by the angle
// a_i = p * base^(-2i/d):
//   x_i' = x_i cos a - x_{i+d/2} sin a,   x_{i+d/2}' = x_{i+d/2} cos a + x_i sin a
// and the inverse turn (the backward: a rotation's transpose) is the turn by -a. The angle is
// formed in double: positions run into the millions, where a float angle would be off by
// tenths of a radian; its cosine and sine are rounded to float and the turn itself is float.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "runtime/kernels/hd/math.hpp"

namespace burst::rt::hd {

// base^(-2i/d): the turn per position of pair i.
BURST_HOST_DEVICE inline double rope_frequency(std::int64_t i, std::int64_t head_dim, float base) {
  return pow_of(static_cast<double>(base), -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
}

struct RopeTurn {
  float cos = 1.0f;
  float sin = 0.0f;
};

// The turn of a pair with `frequency` at `position`; `inverse`: the turn back.
BURST_HOST_DEVICE inline RopeTurn rope_turn(std::int64_t position, double frequency, bool inverse) {
  const double direction = inverse ? -1.0 : 1.0;
  const CosSin angle = cos_sin_of(direction * static_cast<double>(position) * frequency);
  return {static_cast<float>(angle.cos), static_cast<float>(angle.sin)};
}

struct RopePair {
  float first = 0.0f;   // x_i
  float second = 0.0f;  // x_{i + d/2}
};

BURST_HOST_DEVICE inline RopePair rope_rotate(RopePair x, RopeTurn t) {
  return {x.first * t.cos - x.second * t.sin, x.second * t.cos + x.first * t.sin};
}

}  // namespace burst::rt::hd
