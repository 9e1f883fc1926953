// The GPU tests' inputs and yardstick: normal values already rounded to bf16 (so the GPU and the
// CPU reference start from the same numbers), and a result within k units of bf16's rounding
// (2^-8 relative) of the CPU fp32 reference's largest magnitude, and finite.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <span>
#include <vector>

#include "common/bf16.hpp"

namespace burst::test {

inline constexpr double kBf16Eps = 1.0 / 256;

// n normal values of standard deviation `sd`, each rounded to bf16.
inline std::vector<float> bf16_values(std::size_t n, unsigned seed, float sd = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, sd);
  std::vector<float> v(n);
  for (float& x : v) x = round_to_bf16(normal(rng));
  return v;
}

inline void check_within(const char* what, std::span<const float> got, std::span<const float> want, double k) {
  REQUIRE(got.size() == want.size());
  double max_error = 0, max_reference = 0;
  std::size_t non_finite = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (!std::isfinite(got[i])) ++non_finite;
    max_error = std::max(max_error, std::abs(static_cast<double>(got[i]) - want[i]));
    max_reference = std::max(max_reference, std::abs(static_cast<double>(want[i])));
  }
  INFO(what << ": max error " << max_error << ", max |cpu| " << max_reference << ", bound "
            << k * kBf16Eps * max_reference);
  CHECK(non_finite == 0);
  CHECK(max_error <= k * kBf16Eps * max_reference);
}

}  // namespace burst::test
