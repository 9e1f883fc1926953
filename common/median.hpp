// The median of measured times: the middle value, or the mean of the two middle ones. What a
// run reports of its repeated timings (a training run's steps, an attention run's repeats),
// where a mean would let one run disturbed by the machine move the figure.
#pragma once

#include <algorithm>
#include <vector>

namespace burst {

// 0 for no values.
[[nodiscard]] inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace burst
