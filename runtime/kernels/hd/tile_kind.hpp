// Classifying a tile of queries x keys from the position RANGES of its rows alone.
//
// A tile of Bq queries and Bk keys covers query positions [q.lo, q.hi] and key positions
// [k.lo, k.hi]. From the ranges a mask can tell that no pair attends (Empty: skip the tile),
// that every pair does (Full: no element mask), or neither (Partial: test each element with
// hd::attends; a Partial tile may still turn out to have no allowed pair). Ranges of permuted
// layouts (striped, zigzag) interleave, so a range test is conservative: it never says Empty
// or Full wrongly, it only says Partial more often than an element scan would.
//
// The base masks, over q - k in [q.lo - k.hi, q.hi - k.lo] (causal is a window without end):
//   window: Empty if q - k < 0 everywhere or >= W everywhere; Full if 0 <= q - k < W everywhere
//   document: also Empty if the tiles' documents cannot meet; Full only inside one document
// A block-sparse table is scanned over the block pairs the ranges touch (Empty if none is
// allowed, Full if all are); past kMaxScannedBlockPairs the tile is simply Partial.
//
// TileRef is one entry of a tile list (runtime/cuda/detail/tile_list.hpp): the tile on the other
// side of a non-empty pair, and its kind.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "runtime/kernels/hd/mask.hpp"

namespace burst::rt::hd {

// Positions [lo, hi] covered by the rows of a tile.
struct PositionRange {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
};

enum class TileKind : std::uint8_t { Empty, Partial, Full };

struct TileRef {
  std::int32_t tile = 0;
  TileKind kind = TileKind::Partial;
};

inline constexpr std::int64_t kMaxScannedBlockPairs = 4096;

BURST_HOST_DEVICE inline TileKind classify_base(const MaskView& m, PositionRange q, PositionRange k) {
  if (m.base == BaseMask::Full) return TileKind::Full;
  const std::int64_t min_diff = q.lo - k.hi;  // q - k over the tile lies in [min_diff, max_diff]
  const std::int64_t max_diff = q.hi - k.lo;
  const std::int64_t w = m.base == BaseMask::Sliding ? m.window : kLastPosition;
  if (max_diff < 0 || min_diff >= w) return TileKind::Empty;
  if (m.base == BaseMask::Document) {
    const std::int64_t l = m.doc_len;
    if (k.hi / l < q.lo / l || k.lo / l > q.hi / l) return TileKind::Empty;
    const bool one_document = q.lo / l == q.hi / l && k.lo / l == k.hi / l && q.lo / l == k.lo / l;
    return min_diff >= 0 && one_document ? TileKind::Full : TileKind::Partial;
  }
  return min_diff >= 0 && max_diff < w ? TileKind::Full : TileKind::Partial;
}

BURST_HOST_DEVICE inline TileKind classify_sparse(const MaskView& m, PositionRange q, PositionRange k) {
  const std::int64_t q0 = q.lo / m.block, q1 = q.hi / m.block;
  const std::int64_t k0 = k.lo / m.block, k1 = k.hi / m.block;
  const std::int64_t pairs = (q1 - q0 + 1) * (k1 - k0 + 1);
  if (pairs > kMaxScannedBlockPairs) return TileKind::Partial;
  std::int64_t allowed = 0;
  for (std::int64_t qb = q0; qb <= q1; ++qb) {
    for (std::int64_t kb = k0; kb <= k1; ++kb) allowed += m.sparse[qb * m.blocks + kb] != 0 ? 1 : 0;
  }
  if (allowed == 0) return TileKind::Empty;
  return allowed == pairs ? TileKind::Full : TileKind::Partial;
}

BURST_HOST_DEVICE inline TileKind classify(const MaskView& m, PositionRange q, PositionRange k) {
  const TileKind base = classify_base(m, q, k);
  if (base == TileKind::Empty || m.sparse == nullptr) return base;
  const TileKind sparse = classify_sparse(m, q, k);
  if (sparse == TileKind::Empty) return TileKind::Empty;
  return base == TileKind::Full && sparse == TileKind::Full ? TileKind::Full : TileKind::Partial;
}

}  // namespace burst::rt::hd
