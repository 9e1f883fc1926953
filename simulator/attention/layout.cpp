// Layouts as token progressions (see layout.hpp).
#include "simulator/attention/layout.hpp"

namespace burst::sim {

std::int64_t layout_multiple(Layout layout, int ring_size) {
  return layout == Layout::Zigzag ? 2 * std::int64_t{ring_size} : std::int64_t{ring_size};
}

TokenSet ring_tokens(Layout layout, std::int64_t seq, int ring_size, int rank) {
  TokenSet set;
  const std::int64_t r = rank, n = ring_size;
  switch (layout) {
    case Layout::Contiguous: {
      const std::int64_t c = seq / n;
      set.add({r * c, c, 1});
      break;
    }
    case Layout::Zigzag: {
      const std::int64_t k = seq / (2 * n);
      set.add({r * k, k, 1});
      set.add({(2 * n - 1 - r) * k, k, 1});
      break;
    }
    case Layout::Striped: set.add({r, seq / n, n}); break;
  }
  return set;
}

}  // namespace burst::sim
