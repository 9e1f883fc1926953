// Mask predicates, tile classification from position ranges, and additive masks of partial
// tiles (see attention_mask.hpp).
#include "runtime/kernels/attention_mask.hpp"

#include <algorithm>
#include <limits>

namespace burst::rt {
namespace {

constexpr std::int64_t kUnbounded = std::numeric_limits<std::int64_t>::max();
// A range test of a block-sparse tile scans its block pairs; beyond this many (a striped tile
// covers blocks across the whole sequence) the tile is simply called Partial.
constexpr std::int64_t kMaxScannedBlockPairs = 4096;

// Sliding window of W, with causal as W = unbounded: allowed iff 0 <= q - k < W.
std::int64_t window_of(const Mask& m) { return m.kind == MaskKind::SlidingWindow ? m.window : kUnbounded; }

TileKind classify_base(const Mask& m, PositionRange q, PositionRange k) {
  if (m.kind == MaskKind::Full) return TileKind::Full;
  const std::int64_t min_diff = q.lo - k.hi;  // q - k over the tile lies in [min_diff, max_diff]
  const std::int64_t max_diff = q.hi - k.lo;
  const std::int64_t w = window_of(m);
  if (max_diff < 0 || min_diff >= w) return TileKind::Empty;
  if (m.kind == MaskKind::Document) {
    const std::int64_t L = m.doc_len;
    if (k.hi / L < q.lo / L || k.lo / L > q.hi / L) return TileKind::Empty;
    const bool one_document = q.lo / L == q.hi / L && k.lo / L == k.hi / L && q.lo / L == k.lo / L;
    return min_diff >= 0 && one_document ? TileKind::Full : TileKind::Partial;
  }
  return min_diff >= 0 && max_diff < w ? TileKind::Full : TileKind::Partial;
}

TileKind classify_sparse(const BlockSparse& s, PositionRange q, PositionRange k) {
  const std::int64_t q0 = q.lo / s.block, q1 = q.hi / s.block;
  const std::int64_t k0 = k.lo / s.block, k1 = k.hi / s.block;
  if ((q1 - q0 + 1) * (k1 - k0 + 1) > kMaxScannedBlockPairs) return TileKind::Partial;
  std::int64_t allowed = 0;
  for (std::int64_t qb = q0; qb <= q1; ++qb) {
    for (std::int64_t kb = k0; kb <= k1; ++kb) allowed += s.allows(qb, kb) ? 1 : 0;
  }
  if (allowed == 0) return TileKind::Empty;
  return allowed == (q1 - q0 + 1) * (k1 - k0 + 1) ? TileKind::Full : TileKind::Partial;
}

template <typename Allow>
std::int64_t fill(Allow allow, std::span<const std::int64_t> q, std::span<const std::int64_t> k, float* s,
                  std::int64_t ld) {
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  std::int64_t allowed = 0;
  for (std::size_t r = 0; r < q.size(); ++r) {
    float* row = s + static_cast<std::int64_t>(r) * ld;
    for (std::size_t c = 0; c < k.size(); ++c) {
      const bool ok = allow(q[r], k[c]);
      row[c] = ok ? 0.0f : kMasked;
      allowed += ok ? 1 : 0;
    }
  }
  return allowed;
}

// Calls f with the base mask as a predicate, specialised per kind so the element loop has no
// switch inside.
template <typename F>
std::int64_t with_base_predicate(const Mask& m, F&& f) {
  switch (m.kind) {
    case MaskKind::Full:
      return f([](std::int64_t, std::int64_t) { return true; });
    case MaskKind::Causal:
      return f([](std::int64_t q, std::int64_t k) { return k <= q; });
    case MaskKind::SlidingWindow:
      return f([w = m.window](std::int64_t q, std::int64_t k) { return k <= q && q - k < w; });
    case MaskKind::Document:
      return f([l = m.doc_len](std::int64_t q, std::int64_t k) { return k <= q && q / l == k / l; });
  }
  return 0;
}

}  // namespace

BlockSparse BlockSparse::from(std::int64_t block, std::int64_t blocks,
                              const std::function<bool(std::int64_t, std::int64_t)>& predicate) {
  BlockSparse s{block, blocks, std::vector<std::uint8_t>(static_cast<std::size_t>(blocks * blocks), 0)};
  for (std::int64_t qb = 0; qb < blocks; ++qb) {
    for (std::int64_t kb = 0; kb < blocks; ++kb) {
      s.allowed[static_cast<std::size_t>(qb * blocks + kb)] = predicate(qb, kb) ? 1 : 0;
    }
  }
  return s;
}

PositionRange range_of(std::span<const std::int64_t> positions) {
  const auto [lo, hi] = std::minmax_element(positions.begin(), positions.end());
  return {*lo, *hi};
}

TileKind classify(const AttentionMask& mask, PositionRange q, PositionRange k) {
  const TileKind base = classify_base(mask.base, q, k);
  if (base == TileKind::Empty || !mask.sparse) return base;
  const TileKind sparse = classify_sparse(*mask.sparse, q, k);
  if (sparse == TileKind::Empty) return TileKind::Empty;
  return base == TileKind::Full && sparse == TileKind::Full ? TileKind::Full : TileKind::Partial;
}

std::int64_t fill_additive_mask(const AttentionMask& mask, std::span<const std::int64_t> q,
                                std::span<const std::int64_t> k, float* s, std::int64_t ld) {
  return with_base_predicate(mask.base, [&](auto base_allows) {
    if (!mask.sparse) return fill(base_allows, q, k, s, ld);
    const BlockSparse& sp = *mask.sparse;
    const auto allows = [&](std::int64_t qp, std::int64_t kp) {
      return base_allows(qp, kp) && sp.allows(qp / sp.block, kp / sp.block);
    };
    return fill(allows, q, k, s, ld);
  });
}

}  // namespace burst::rt
