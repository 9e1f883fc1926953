// How far a tensor is from its reference, as the training checks measure it: the largest
// absolute difference over the reference's largest magnitude (0 when both are zero), so one
// figure per tensor whatever its scale; `burst run --check` compares it with its tolerance.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>

namespace burst::rt {

[[nodiscard]] inline double relative_error(std::span<const float> got, std::span<const float> want) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(want[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

}  // namespace burst::rt
