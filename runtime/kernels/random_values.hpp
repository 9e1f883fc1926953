// Uniform random floats in [-1, 1): the inputs of kernel benchmarks and calibration runs, whose
// speed does not depend on the values (the numerical tests use their own references).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace burst::rt {

inline std::vector<float> random_values(std::int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = uniform(rng);
  return v;
}

}  // namespace burst::rt
