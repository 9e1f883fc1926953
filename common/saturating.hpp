// Sizes estimated in floating point (bytes a plan needs, elements it holds) brought back to
// integers without wrapping.
//
// static_cast of a double beyond the integer's range is undefined behaviour (x86-64 gives 0 or
// 2^63): a 2^53-token sequence's estimate of 2^70 bytes came back as a few bytes, the memory
// pre-flight passed it and the kernel's OOM killer ended the ranks without a word. Here an
// estimate saturates at kSizeCeiling (2^63, 8 EiB: more than any machine has; NaN counts as
// the ceiling, an estimate that cannot be computed is not small), sums saturate too, and a
// value at the ceiling reads "too large to count", never "small".
#pragma once

#include <algorithm>
#include <cstdint>

namespace burst {

inline constexpr std::uint64_t kSizeCeiling = std::uint64_t{1} << 63;

// `value` rounded down, clamped to [0, kSizeCeiling]; NaN gives the ceiling.
[[nodiscard]] constexpr std::uint64_t saturating_size(double value) {
  if (!(value < static_cast<double>(kSizeCeiling))) return kSizeCeiling;
  return value > 0 ? static_cast<std::uint64_t>(value) : 0;
}

// a + b, or kSizeCeiling where the sum reaches it.
[[nodiscard]] constexpr std::uint64_t saturating_sum(std::uint64_t a, std::uint64_t b) {
  return a >= kSizeCeiling - std::min(b, kSizeCeiling) ? kSizeCeiling : a + b;
}

}  // namespace burst
