// The attention mask as plain data and its element predicate, for the CPU and the GPU alike.
//
// attention_mask.hpp states the masks over global positions q (query) and k (key):
//   full always; causal k <= q; sliding W q - W < k <= q; document L k <= q and q / L == k / L
// and an optional block-sparse table over (q / B, k / B) ANDed with them. Every base mask
// allows, for one query, an INTERVAL of key positions:
//   full [0, max]   causal [0, q]   sliding [max(0, q - W + 1), q]   document [q - q % L, q]
// so a kernel computes a row's interval once and then tests each key with two comparisons,
// the same for every kind (no switch in the inner loop, on either device).
//
// Positions are >= 0 (the kernels check), so every interval starts at 0 or later and the
// position -1 is never allowed: kernels give it to padding rows past the end of a block.
//
// MaskView holds no containers (the block-sparse table is a pointer: host memory for the CPU
// kernels, device memory for the GPU ones), so it is passed to CUDA kernels by value.
// attention_mask.hpp's view_of() makes one from an AttentionMask.
#pragma once

#include <cstdint>
#include <limits>

#include "common/host_device.hpp"

namespace burst::rt::hd {

enum class BaseMask : std::uint8_t { Full, Causal, Sliding, Document };

struct MaskView {
  BaseMask base = BaseMask::Causal;
  std::int64_t window = 0;               // Sliding: a query sees its last `window` positions
  std::int64_t doc_len = 0;              // Document: causal inside documents of doc_len tokens
  const std::uint8_t* sparse = nullptr;  // block-sparse table (blocks x blocks), or none
  std::int64_t block = 0;                // tokens per block of the table
  std::int64_t blocks = 0;               // blocks per side of the table
};

inline constexpr std::int64_t kLastPosition = std::numeric_limits<std::int64_t>::max();

// Key positions [lo, hi] a query may attend under the base mask (empty when lo > hi).
struct KeyInterval {
  std::int64_t lo = 0;
  std::int64_t hi = -1;
  [[nodiscard]] BURST_HOST_DEVICE constexpr bool contains(std::int64_t k) const { return lo <= k && k <= hi; }
};

BURST_HOST_DEVICE inline KeyInterval allowed_keys(const MaskView& m, std::int64_t q) {
  switch (m.base) {
    case BaseMask::Full: return {0, kLastPosition};
    case BaseMask::Causal: return {0, q};
    case BaseMask::Sliding: return {q - m.window + 1 > 0 ? q - m.window + 1 : 0, q};
    case BaseMask::Document: return {q - q % m.doc_len, q};
  }
  return {};
}

// The block-sparse table's verdict on (q, k); true when there is no table.
BURST_HOST_DEVICE inline bool sparse_allows(const MaskView& m, std::int64_t q, std::int64_t k) {
  return m.sparse == nullptr || m.sparse[(q / m.block) * m.blocks + k / m.block] != 0;
}

// Whether query position q attends key position k.
BURST_HOST_DEVICE inline bool attends(const MaskView& m, std::int64_t q, std::int64_t k) {
  return allowed_keys(m, q).contains(k) && sparse_allows(m, q, k);
}

}  // namespace burst::rt::hd
