// Wall-clock seconds on the steady clock: how benchmarks and the runtime time things.
#pragma once

#include <chrono>

namespace burst {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs fn and adds its wall time to each of `seconds` (a phase's own total and the totals of
// the phases that enclose it).
template <typename Fn, typename... Seconds>
void timed(Fn&& fn, Seconds&... seconds) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  const double elapsed = seconds_since(start);
  ((seconds += elapsed), ...);
}

}  // namespace burst
