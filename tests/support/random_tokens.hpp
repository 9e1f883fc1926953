// Test helper: a training sequence of random byte tokens (0..255) and random targets, every
// target at position i with i % every == at left out (-1, not counted), and how many count.
// Tokens and targets are drawn in turn from one std::mt19937 seeded with `seed`, a left-out
// target drawing nothing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace burst::test {

struct RandomTokens {
  std::vector<std::int32_t> tokens, targets;
  std::int64_t counted = 0;
};

inline RandomTokens random_tokens(std::int64_t seq, unsigned seed, std::int64_t every, std::int64_t at) {
  std::mt19937 rng(seed);
  RandomTokens r;
  for (std::int64_t i = 0; i < seq; ++i) {
    r.tokens.push_back(static_cast<std::int32_t>(rng() % 256));
    r.targets.push_back(i % every == at ? -1 : static_cast<std::int32_t>(rng() % 256));
  }
  r.counted =
      static_cast<std::int64_t>(std::count_if(r.targets.begin(), r.targets.end(), [](auto t) { return t >= 0; }));
  return r;
}

}  // namespace burst::test
