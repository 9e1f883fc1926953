// Wall-clock seconds since a point, on the steady clock: how benchmarks and the runtime time things.
#pragma once

#include <chrono>

namespace burst {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace burst
