// The tiling shared by the forward and backward kernels of one block pair.
//
// Queries are cut into tiles of tile_q rows and keys into tiles of tile_k rows, in row order;
// each tile remembers the range of global positions its rows cover, and every (query tile, key
// tile) pair is classified once per call (Empty, Partial, Full; see attention_mask.hpp), shared
// by all heads. masked_scores() then produces one head's score tile S = scale Q K^T with the
// mask folded into the matmul: a Partial tile first receives its additive mask (0 or -inf) and
// sgemm runs with beta = 1, so masked scores come out -inf without a second pass; a Full tile
// runs with beta = 0 and no mask at all.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/kernels/attention.hpp"

namespace burst::rt {

struct Tile {
  std::int64_t first = 0;
  std::int64_t count = 0;
  PositionRange range;
};

class TilePlan {
 public:
  TilePlan(const BlockPair& in, const AttentionMask& mask, const KernelOptions& options);

  [[nodiscard]] const std::vector<Tile>& q_tiles() const { return q_tiles_; }
  [[nodiscard]] const std::vector<Tile>& k_tiles() const { return k_tiles_; }
  [[nodiscard]] TileKind kind(std::size_t qi, std::size_t kj) const { return kinds_[qi * k_tiles_.size() + kj]; }
  // Rows of the largest query and key tiles (the first ones): what scratch buffers must hold,
  // at most the block's rows however large the options ask tiles to be.
  [[nodiscard]] std::size_t max_q_rows() const {
    return q_tiles_.empty() ? 0 : static_cast<std::size_t>(q_tiles_[0].count);
  }
  [[nodiscard]] std::size_t max_k_rows() const {
    return k_tiles_.empty() ? 0 : static_cast<std::size_t>(k_tiles_[0].count);
  }
  // Query heads per kv head (grouped-query attention) and the softmax scale 1 / sqrt(d).
  [[nodiscard]] std::int64_t group() const { return group_; }
  [[nodiscard]] float scale() const { return scale_; }

  // Writes S = scale * Q K^T of query tile qi, key tile kj, query head h into s (rows x cols,
  // ld = cols), masked scores -inf. Returns the attending pairs; 0 means the tile is empty and
  // nothing was computed.
  std::int64_t masked_scores(std::int64_t head, std::size_t qi, std::size_t kj, float* s) const;

 private:
  const BlockPair& in_;
  const AttentionMask& mask_;
  std::vector<Tile> q_tiles_;
  std::vector<Tile> k_tiles_;
  std::vector<TileKind> kinds_;
  std::int64_t group_ = 1;
  float scale_ = 1;
};

}  // namespace burst::rt
