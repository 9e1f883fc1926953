// bf16 rounding (common/bf16.hpp) against its definition: the nearest bf16, ties to the even
// mantissa, NaN kept NaN, overflow to infinity; and what a round trip keeps.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

#include "common/bf16.hpp"

using burst::Bf16;
using burst::round_to_bf16;

namespace {

// The two bf16 values around x, by truncation and one ulp up, and the nearer, ties to even:
// the definition, computed without the bit trick the header uses.
float nearest_bf16(float x) {
  const float down = burst::float_from_bits(burst::float_bits(x) & 0xFFFF0000u);
  const float up = burst::float_from_bits((burst::float_bits(x) & 0xFFFF0000u) + 0x10000u);
  const double dd = std::fabs(static_cast<double>(x) - down), du = std::fabs(static_cast<double>(up) - x);
  if (dd < du) return down;
  if (du < dd) return up;
  return (burst::float_bits(down) >> 16) % 2 == 0 ? down : up;
}

}  // namespace

TEST_CASE("bf16 rounds to the nearest value, ties to even") {
  CHECK(round_to_bf16(1.0f) == 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: the tie goes to the even mantissa, 1.
  CHECK(round_to_bf16(1.0f + 0x1.0p-8f) == 1.0f);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  CHECK(round_to_bf16(1.0f + 3 * 0x1.0p-8f) == 1.0f + 0x1.0p-6f);
  CHECK(round_to_bf16(1.0f + 0x1.0p-8f + 0x1.0p-20f) == 1.0f + 0x1.0p-7f);  // above the tie: up
  CHECK(round_to_bf16(-1.0f - 0x1.0p-8f - 0x1.0p-20f) == -1.0f - 0x1.0p-7f);
  // Many values against the definition, and the relative error within the unit roundoff.
  std::uint32_t state = 12345;
  for (int i = 0; i < 100000; ++i) {
    state = state * 1664525u + 1013904223u;
    const float x =
        std::ldexp(static_cast<float>(state % 65536u) / 65536.0f + 0.5f, static_cast<int>(state >> 24) % 60 - 30) *
        ((state & 1u) ? -1.0f : 1.0f);
    const float r = round_to_bf16(x);
    REQUIRE(r == nearest_bf16(x));
    REQUIRE(std::fabs(r - x) <= burst::kBf16UnitRoundoff * std::fabs(x));
  }
}

TEST_CASE("bf16 keeps NaN a NaN, infinities infinite, and overflows to infinity") {
  CHECK(std::isnan(round_to_bf16(std::numeric_limits<float>::quiet_NaN())));
  // A NaN whose payload lies only in the low bits must not round to infinity.
  CHECK(std::isnan(round_to_bf16(burst::float_from_bits(0x7F800001u))));
  CHECK(round_to_bf16(std::numeric_limits<float>::infinity()) == std::numeric_limits<float>::infinity());
  CHECK(round_to_bf16(-std::numeric_limits<float>::infinity()) == -std::numeric_limits<float>::infinity());
  CHECK(std::isinf(round_to_bf16(std::numeric_limits<float>::max())));
  CHECK(round_to_bf16(0.0f) == 0.0f);
  CHECK(std::signbit(round_to_bf16(-0.0f)));
}

TEST_CASE("a bf16 value survives the trip through fp32 unchanged") {
  for (std::uint32_t bits = 0; bits < 0x10000u; bits += 7) {
    const Bf16 b{static_cast<std::uint16_t>(bits)};
    const float x = burst::to_float(b);
    if (std::isnan(x)) continue;
    CHECK(burst::to_bf16(x) == b);
  }
}
