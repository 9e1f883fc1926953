// Seconds as a user gives them (a double: `--timeout 0.5`, `--timeout 1e10`) turned into a
// clock's duration without overflow.
//
// std::chrono converts a double of seconds to the steady clock's int64 nanoseconds by plain
// multiplication: past 2^63 ns (about 292 years, 9.2e9 s) the result wraps to a negative
// duration, so a deadline "1e10 s from now" lies in the past and the wait ends at once
// ("did not complete within 1e+10 s"). Every seconds-to-duration conversion goes through
// wait_duration, which clamps to [0, kMaxWaitSeconds]: about 31.7 years, beyond any job, and far
// enough below the overflow that now() + the duration is still in range. NaN waits 0 s.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>

namespace burst {

inline constexpr double kMaxWaitSeconds = 1e9;

// `seconds`, clamped to [0, kMaxWaitSeconds], as the steady clock's duration.
[[nodiscard]] inline std::chrono::steady_clock::duration wait_duration(double seconds) {
  const double clamped = std::isnan(seconds) ? 0.0 : std::clamp(seconds, 0.0, kMaxWaitSeconds);
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(clamped));
}

}  // namespace burst
