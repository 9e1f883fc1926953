// fast_exp, the softmax's exp: within fp32 rounding of std::exp where the softmax uses it,
// exactly 0 below -87.3 and for -inf (masked scores), and NaN for NaN (a diverged run's scores:
// the value must survive to the loss, and no NaN may reach the float-to-integer conversion,
// which UndefinedBehaviorSanitizer reports).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "runtime/kernels/detail/fast_exp.hpp"

using burst::rt::fast_exp;

TEST_CASE("fast_exp: within fp32 rounding of exp on the softmax's range") {
  double worst = 0;
  for (float x = -87.0f; x <= 0.0f; x += 0.01f) {
    const double want = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::abs(static_cast<double>(fast_exp(x)) - want) / want);
  }
  CHECK(worst < 5e-7);
}

TEST_CASE("fast_exp: 0 below the fp32 range and for -inf, NaN for NaN") {
  CHECK(fast_exp(-88.0f) == 0.0f);
  CHECK(fast_exp(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(std::isnan(fast_exp(std::numeric_limits<float>::quiet_NaN())));
  CHECK(std::isnan(fast_exp(-std::numeric_limits<float>::quiet_NaN())));
}
