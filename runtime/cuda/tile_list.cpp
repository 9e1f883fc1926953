// Tile lists of a block pair (see tile_list.hpp).
#include "runtime/cuda/detail/tile_list.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/cuda/detail/kernel_traits.hpp"
#include "runtime/kernels/hd/index_math.hpp"

namespace burst::rt {
namespace {

constexpr std::string_view kCall = "build_tile_list";

std::string where(std::string_view name) { return fmt::format("{}: {}", kCall, name); }

void check_positions(Problems& p, std::string_view name, std::span<const std::int64_t> positions,
                     const hd::MaskView& view) {
  if (positions.empty()) return;
  const PositionRange r = range_of(positions);
  if (r.lo < 0) p.add(where(name), fmt::format("position {} is negative", r.lo), "positions >= 0");
  if (view.sparse != nullptr && r.hi >= view.blocks * view.block) {
    p.add(where(name),
          fmt::format("position {} lies beyond the block-sparse table ({} blocks of {} tokens)", r.hi, view.blocks,
                      view.block),
          fmt::format("positions < {}", view.blocks * view.block));
  }
}

void check_arguments(std::span<const std::int64_t> q_positions, std::span<const std::int64_t> k_positions,
                     const AttentionMask& mask, std::int64_t tile_q, std::int64_t tile_k) {
  Problems p;
  if (tile_q < 1 || tile_k < 1) {
    p.add(where("tiles"), fmt::format("tiles of {} x {}", tile_q, tile_k), "tile_q >= 1 and tile_k >= 1");
  }
  if (mask.base.kind == MaskKind::SlidingWindow && mask.base.window < 1) {
    p.add(where("mask"), fmt::format("sliding window of {} tokens", mask.base.window), "window >= 1");
  }
  if (mask.base.kind == MaskKind::Document && mask.base.doc_len < 1) {
    p.add(where("mask"), fmt::format("documents of {} tokens", mask.base.doc_len), "doc_len >= 1");
  }
  const BlockSparse* table = mask.sparse ? &*mask.sparse : nullptr;
  if (table != nullptr && (table->block < 1 || table->blocks < 1 ||
                           static_cast<std::int64_t>(table->allowed.size()) != table->blocks * table->blocks)) {
    p.add(where("mask.sparse"),
          fmt::format("{} blocks of {} tokens with a table of {} entries", table->blocks, table->block,
                      table->allowed.size()),
          "block >= 1, blocks >= 1 and blocks * blocks entries", "build it with BlockSparse::from");
  }
  p.throw_if_any();
  const hd::MaskView view = view_of(mask);
  check_positions(p, "q_positions", q_positions, view);
  check_positions(p, "k_positions", k_positions, view);
  p.throw_if_any();
}

std::vector<PositionRange> tile_ranges(std::span<const std::int64_t> positions, std::int64_t tile) {
  std::vector<PositionRange> ranges;
  const auto n = static_cast<std::int64_t>(positions.size());
  for (std::int64_t first = 0; first < n; first += tile) {
    ranges.push_back(range_of(
        positions.subspan(static_cast<std::size_t>(first), static_cast<std::size_t>(std::min(tile, n - first)))));
  }
  return ranges;
}

std::span<const std::int64_t> tile_rows(std::span<const std::int64_t> positions, std::int64_t index,
                                        std::int64_t tile) {
  const auto n = static_cast<std::int64_t>(positions.size());
  const std::int64_t first = index * tile;
  return positions.subspan(static_cast<std::size_t>(first), static_cast<std::size_t>(std::min(tile, n - first)));
}

// Attending pairs of a tile; with stop_at_first, 1 as soon as one is found.
std::int64_t allowed_in_tile(const hd::MaskView& view, std::span<const std::int64_t> q, std::span<const std::int64_t> k,
                             bool stop_at_first) {
  std::int64_t allowed = 0;
  for (const std::int64_t qp : q) {
    const hd::KeyInterval keys = hd::allowed_keys(view, qp);
    for (const std::int64_t kp : k) {
      if (keys.contains(kp) && hd::sparse_allows(view, qp, kp)) {
        if (stop_at_first) return 1;
        ++allowed;
      }
    }
  }
  return allowed;
}

// Attending pairs of the whole block under a base mask (no table): each query's keys are one
// interval, counted by binary search over the sorted key positions.
double allowed_by_intervals(const hd::MaskView& view, std::span<const std::int64_t> q_positions,
                            std::span<const std::int64_t> k_positions) {
  std::vector<std::int64_t> keys(k_positions.begin(), k_positions.end());
  std::sort(keys.begin(), keys.end());
  double allowed = 0;
  for (const std::int64_t qp : q_positions) {
    const hd::KeyInterval interval = hd::allowed_keys(view, qp);
    const auto lo = std::lower_bound(keys.begin(), keys.end(), interval.lo);
    const auto hi = std::upper_bound(lo, keys.end(), interval.hi);
    allowed += static_cast<double>(hi - lo);
  }
  return allowed;
}

}  // namespace

TileList build_tile_list(std::span<const std::int64_t> q_positions, std::span<const std::int64_t> k_positions,
                         const AttentionMask& mask, std::int64_t tile_q, std::int64_t tile_k) {
  check_arguments(q_positions, k_positions, mask, tile_q, tile_k);
  const hd::MaskView view = view_of(mask);
  TileList list;
  list.tile_q = tile_q;
  list.tile_k = tile_k;
  list.q_tiles = hd::tile_count(static_cast<std::int64_t>(q_positions.size()), tile_q);
  list.k_tiles = hd::tile_count(static_cast<std::int64_t>(k_positions.size()), tile_k);
  const std::vector<PositionRange> q_ranges = tile_ranges(q_positions, tile_q);
  const std::vector<PositionRange> k_ranges = tile_ranges(k_positions, tile_k);

  std::vector<TileKind> kinds(static_cast<std::size_t>(list.q_tiles * list.k_tiles), TileKind::Empty);
  // Attending pairs summed tile by tile: exact under a block-sparse table, where Partial tiles
  // are scanned to the end; without one the scan stops at the first pair and the block's
  // count comes from the intervals instead.
  double tile_allowed = 0;
  for (std::int64_t qi = 0; qi < list.q_tiles; ++qi) {
    const auto q = tile_rows(q_positions, qi, tile_q);
    for (std::int64_t kj = 0; kj < list.k_tiles; ++kj) {
      const auto k = tile_rows(k_positions, kj, tile_k);
      const double area = static_cast<double>(q.size()) * static_cast<double>(k.size());
      const auto qr = q_ranges[static_cast<std::size_t>(qi)], kr = k_ranges[static_cast<std::size_t>(kj)];
      TileKind kind = hd::classify(view, qr, kr);
      if (kind == TileKind::Partial) {
        const std::int64_t allowed = allowed_in_tile(view, q, k, view.sparse == nullptr);
        if (allowed == 0) kind = TileKind::Empty;
        tile_allowed += static_cast<double>(allowed);
      } else if (kind == TileKind::Full) {
        tile_allowed += area;
      }
      if (kind == TileKind::Empty) continue;
      kinds[static_cast<std::size_t>(qi * list.k_tiles + kj)] = kind;
      ++list.tiles_computed;
      list.scores += area;
    }
  }
  if (list.tiles_computed > std::numeric_limits<std::int32_t>::max()) {
    throw Error(
        Problem{where("positions"),
                fmt::format("{} non-empty tiles do not fit the kernels' 32-bit tile lists", list.tiles_computed), "",
                "split the block pair into smaller blocks"});
  }
  list.tiles_skipped = list.q_tiles * list.k_tiles - list.tiles_computed;
  list.allowed_pairs = view.sparse != nullptr ? tile_allowed : allowed_by_intervals(view, q_positions, k_positions);

  list.by_query_offsets.reserve(static_cast<std::size_t>(list.q_tiles + 1));
  list.by_query.reserve(static_cast<std::size_t>(list.tiles_computed));
  list.by_query_offsets.push_back(0);
  for (std::int64_t qi = 0; qi < list.q_tiles; ++qi) {
    for (std::int64_t kj = 0; kj < list.k_tiles; ++kj) {
      const TileKind kind = kinds[static_cast<std::size_t>(qi * list.k_tiles + kj)];
      if (kind != TileKind::Empty) list.by_query.push_back({static_cast<std::int32_t>(kj), kind});
    }
    list.by_query_offsets.push_back(static_cast<std::int32_t>(list.by_query.size()));
  }
  list.by_key_offsets.reserve(static_cast<std::size_t>(list.k_tiles + 1));
  list.by_key.reserve(static_cast<std::size_t>(list.tiles_computed));
  list.by_key_offsets.push_back(0);
  for (std::int64_t kj = 0; kj < list.k_tiles; ++kj) {
    for (std::int64_t qi = 0; qi < list.q_tiles; ++qi) {
      const TileKind kind = kinds[static_cast<std::size_t>(qi * list.k_tiles + kj)];
      if (kind != TileKind::Empty) list.by_key.push_back({static_cast<std::int32_t>(qi), kind});
    }
    list.by_key_offsets.push_back(static_cast<std::int32_t>(list.by_key.size()));
  }
  return list;
}

KernelTileLists build_kernel_tile_lists(std::span<const std::int64_t> q_positions,
                                        std::span<const std::int64_t> k_positions, const AttentionMask& mask) {
  return {build_tile_list(q_positions, k_positions, mask, gpu::kQueryBlockRows, gpu::kKeyTileRows),
          build_tile_list(q_positions, k_positions, mask, gpu::kQueryTileRows, gpu::kKeyBlockRows),
          build_tile_list(q_positions, k_positions, mask, gpu::kQueryTileRows, gpu::kWideKeyBlockRows)};
}

}  // namespace burst::rt
