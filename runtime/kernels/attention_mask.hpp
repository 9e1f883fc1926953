// Which (query, key) pairs attend, decided from GLOBAL token positions.
//
// Ring layouts permute tokens (zigzag holds two distant chunks, striped holds every P-th token),
// so the rows of a block are not consecutive positions: every kernel takes the position of each
// query and key row and asks the mask about positions, never about row indices.
//
// The base masks of burst::Mask (common/parallelism.hpp), for query position q and key k:
//   full       always
//   causal     k <= q
//   sliding W  q - W < k <= q             (0 <= q - k < W)
//   document L k <= q and q / L == k / L  (causal inside documents of L tokens)
// An optional block-sparse pattern is ANDed with the base mask: the sequence is cut into blocks
// of B tokens and a table over (q / B, k / B) says which block pairs may attend at all (the
// "allowed tiles" of sparse attention, e.g. a local band plus a few global blocks).
//
// The trick that lets kernels skip work: a tile of Bq queries x Bk keys is classified from the
// position RANGES [min, max] of its rows alone. The ranges of a striped tile interleave with
// every other tile's, so a range test can only say "empty", "full" or "maybe" (Partial); a
// Partial tile is then masked element by element, and one with no allowed pair is skipped too.
// The predicate and the classifier live in hd/ (host and device code, one definition), so the
// CUDA kernels mask exactly as these CPU kernels do.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "common/parallelism.hpp"
#include "runtime/kernels/hd/mask.hpp"
#include "runtime/kernels/hd/tile_kind.hpp"

namespace burst::rt {

// A block-sparse pattern: blocks x blocks entries, row = query block q / block, column = key
// block k / block; nonzero means the block pair may attend. Positions must be below
// blocks * block (the kernels check).
struct BlockSparse {
  std::int64_t block = 0;
  std::int64_t blocks = 0;
  std::vector<std::uint8_t> allowed;

  [[nodiscard]] bool allows(std::int64_t q_block, std::int64_t k_block) const {
    return allowed[static_cast<std::size_t>(q_block * blocks + k_block)] != 0;
  }
  // The table of `predicate(q_block, k_block)` over blocks x blocks block pairs.
  [[nodiscard]] static BlockSparse from(std::int64_t block, std::int64_t blocks,
                                        const std::function<bool(std::int64_t, std::int64_t)>& predicate);
};

struct AttentionMask {
  Mask base;
  std::optional<BlockSparse> sparse;
};

// The mask as plain data for the shared host/device predicate and classifier
// (hd/mask.hpp); its block-sparse table points into `mask`, which must outlive it.
[[nodiscard]] hd::MaskView view_of(const AttentionMask& mask);

// Positions [lo, hi] covered by the rows of a tile (hd/tile_kind.hpp).
using hd::PositionRange;
[[nodiscard]] PositionRange range_of(std::span<const std::int64_t> positions);

using hd::TileKind;
[[nodiscard]] TileKind classify(const AttentionMask& mask, PositionRange q, PositionRange k);

// Writes the additive mask of a Partial tile into s ([q.size(), k.size()], rows ld apart):
// 0 where the pair attends, -inf where it does not. Returns the number of attending pairs.
std::int64_t fill_additive_mask(const AttentionMask& mask, std::span<const std::int64_t> q,
                                std::span<const std::int64_t> k, float* s, std::int64_t ld);

}  // namespace burst::rt
