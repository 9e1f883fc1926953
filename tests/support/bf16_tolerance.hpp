// The GPU tests' yardstick: a result computed from bf16 values is within k units of bf16's
// rounding (2^-8 relative) of the CPU fp32 reference's largest magnitude, and finite.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>

namespace burst::test {

inline constexpr double kBf16Eps = 1.0 / 256;

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
