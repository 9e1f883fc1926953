// Ring geometry (see ring_geometry.hpp).
#include "common/ring_geometry.hpp"

namespace burst {

int RingGeometry::block_at(int ring_rank, int step) const {
  const int n = ring_rank / inner, l = ring_rank % inner;
  const int o = step / inner, i = step % inner;
  return ((n - o + outer) % outer) * inner + (l - i + inner) % inner;
}

int RingGeometry::visitor(int block, int step) const {
  const int n = block / inner, l = block % inner;
  const int o = step / inner, i = step % inner;
  return ((n + o) % outer) * inner + (l + i) % inner;
}

}  // namespace burst
