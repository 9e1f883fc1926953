// Mask views, tile classification and additive masks of partial tiles (see attention_mask.hpp);
// the predicate and the classifier themselves are the shared ones of hd/mask.hpp and
// hd/tile_kind.hpp.
#include "runtime/kernels/attention_mask.hpp"

#include <algorithm>
#include <limits>

namespace burst::rt {
namespace {

hd::BaseMask base_of(MaskKind kind) {
  switch (kind) {
    case MaskKind::Full: return hd::BaseMask::Full;
    case MaskKind::Causal: return hd::BaseMask::Causal;
    case MaskKind::SlidingWindow: return hd::BaseMask::Sliding;
    case MaskKind::Document: return hd::BaseMask::Document;
  }
  return hd::BaseMask::Causal;
}

// Writes one row of an additive mask: 0 where `allows(k)`, -inf elsewhere; returns the count.
template <typename Allows>
std::int64_t fill_row(Allows allows, std::span<const std::int64_t> k, float* row) {
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  std::int64_t allowed = 0;
  for (std::size_t c = 0; c < k.size(); ++c) {
    const bool ok = allows(k[c]);
    row[c] = ok ? 0.0f : kMasked;
    allowed += ok ? 1 : 0;
  }
  return allowed;
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

hd::MaskView view_of(const AttentionMask& mask) {
  hd::MaskView view{base_of(mask.base.kind), mask.base.window, mask.base.doc_len, nullptr, 0, 0};
  if (mask.sparse) {
    view.sparse = mask.sparse->allowed.data();
    view.block = mask.sparse->block;
    view.blocks = mask.sparse->blocks;
  }
  return view;
}

PositionRange range_of(std::span<const std::int64_t> positions) {
  const auto [lo, hi] = std::minmax_element(positions.begin(), positions.end());
  return {*lo, *hi};
}

TileKind classify(const AttentionMask& mask, PositionRange q, PositionRange k) {
  return hd::classify(view_of(mask), q, k);
}

// Each row's allowed keys are one interval (hd::allowed_keys), so the element loop is two
// comparisons whatever the mask kind, plus the table lookup of a block-sparse mask.
std::int64_t fill_additive_mask(const AttentionMask& mask, std::span<const std::int64_t> q,
                                std::span<const std::int64_t> k, float* s, std::int64_t ld) {
  const hd::MaskView view = view_of(mask);
  std::int64_t allowed = 0;
  for (std::size_t r = 0; r < q.size(); ++r) {
    const hd::KeyInterval keys = hd::allowed_keys(view, q[r]);
    float* row = s + static_cast<std::int64_t>(r) * ld;
    if (view.sparse == nullptr) {
      allowed += fill_row([keys](std::int64_t kp) { return keys.contains(kp); }, k, row);
    } else {
      allowed += fill_row(
          [keys, &view, qp = q[r]](std::int64_t kp) { return keys.contains(kp) && hd::sparse_allows(view, qp, kp); }, k,
          row);
    }
  }
  return allowed;
}

}  // namespace burst::rt
