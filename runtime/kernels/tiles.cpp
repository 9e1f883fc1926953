// Tiles, their classification, and masked score tiles (see tiles.hpp).
#include "runtime/kernels/detail/tiles.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/kernels/blas.hpp"

namespace burst::rt {
namespace {

std::vector<Tile> cut(std::span<const std::int64_t> positions, std::int64_t tile) {
  std::vector<Tile> tiles;
  const auto n = static_cast<std::int64_t>(positions.size());
  for (std::int64_t first = 0; first < n; first += tile) {
    const std::int64_t count = std::min(tile, n - first);
    tiles.push_back(
        {first, count, range_of(positions.subspan(static_cast<std::size_t>(first), static_cast<std::size_t>(count)))});
  }
  return tiles;
}

}  // namespace

TilePlan::TilePlan(const BlockPair& in, const AttentionMask& mask, const KernelOptions& options)
    : in_(in),
      mask_(mask),
      q_tiles_(cut(in.q_positions, options.tile_q)),
      k_tiles_(cut(in.k_positions, options.tile_k)),
      group_(in.q.shape.heads / in.k.shape.heads),
      scale_(1.0f / std::sqrt(static_cast<float>(in.q.shape.head_dim))) {
  kinds_.reserve(q_tiles_.size() * k_tiles_.size());
  for (const Tile& qt : q_tiles_) {
    for (const Tile& kt : k_tiles_) kinds_.push_back(classify(mask, qt.range, kt.range));
  }
}

std::int64_t TilePlan::masked_scores(std::int64_t head, std::size_t qi, std::size_t kj, float* s) const {
  const Tile& qt = q_tiles_[qi];
  const Tile& kt = k_tiles_[kj];
  const TileKind kind = this->kind(qi, kj);
  if (kind == TileKind::Empty) return 0;
  std::int64_t allowed = qt.count * kt.count;
  if (kind == TileKind::Partial) {
    allowed = fill_additive_mask(
        mask_, in_.q_positions.subspan(static_cast<std::size_t>(qt.first), static_cast<std::size_t>(qt.count)),
        in_.k_positions.subspan(static_cast<std::size_t>(kt.first), static_cast<std::size_t>(kt.count)), s, kt.count);
    if (allowed == 0) return 0;
  }
  gemm(scale_, in_.q.head_rows(head, qt.first, qt.count), Op::None, in_.k.head_rows(head / group_, kt.first, kt.count),
       Op::Transpose, kind == TileKind::Partial ? 1.0f : 0.0f, MatRef{s, qt.count, kt.count, kt.count});
  return allowed;
}

}  // namespace burst::rt
