// A block pair's walks (device only). The kernels that walk key tiles (the forward and the dQ
// pass, query-major) queue, per pipeline stage, the tile's K and V rows of their kv head and the
// keys' positions (past the pair's end: zero rows, position -1). A query-major block's place in
// the pair is a QueryBlock; the dK, dV passes (key-major) walk the entries of their key block
// (KeyBlockEntries).
#pragma once

#include <cstdint>

#include "runtime/cuda/detail/device/warp_tiles.cuh"
#include "runtime/cuda/detail/flash_attention.hpp"
#include "runtime/kernels/hd/index_math.hpp"

namespace burst::rt::gpu::device {

// Key tile `tile` (T::kTileRows rows) into one stage: K into k_dst, V into v_dst, positions into
// positions_dst. All T::kThreads threads take part.
template <class T>
__device__ inline void load_key_tile_async(std::uint16_t* k_dst, std::uint16_t* v_dst, std::int64_t* positions_dst,
                                           const PairInputs& in, std::int32_t tile, std::int64_t kv_head) {
  const PairShape& shape = in.shape;
  const std::int64_t k0 = std::int64_t{tile} * T::kTileRows;
  load_tile_async<T::kHeadDim, T::kTileRows, T::kThreads>(k_dst, in.k, k0, shape.k_tokens, shape.kv_heads, kv_head);
  load_tile_async<T::kHeadDim, T::kTileRows, T::kThreads>(v_dst, in.v, k0, shape.k_tokens, shape.kv_heads, kv_head);
  load_rows_async<T::kTileRows, T::kThreads>(positions_dst, in.k_positions, k0, shape.k_tokens, std::int64_t{1},
                                             std::int64_t{0}, std::int64_t{-1});
}

// Whether a walked key tile of `rows` rows from k0 needs the element predicate: a Partial tile,
// or one running past the pair's last key (its rows past the end must not attend).
__device__ inline bool key_tile_masked(const hd::TileRef& ref, std::int64_t k0, int rows, std::int64_t k_tokens) {
  return ref.kind != hd::TileKind::Full || k0 + rows > k_tokens;
}

// The block a query-major kernel owns: query rows q0 .. q0 + rows - 1 of query head blockIdx.y,
// reading kv head kv_head (grouped-query attention in place), walking key tiles tiles[first ..
// last) of the query-major tile list (none: first == last).
struct QueryBlock {
  std::int64_t head = 0;
  std::int64_t kv_head = 0;
  std::int64_t q0 = 0;
  const hd::TileRef* tiles = nullptr;
  int first = 0;
  int last = 0;

  __device__ QueryBlock(const PairInputs& in, int rows)
      : head(blockIdx.y),
        kv_head(hd::kv_head_of(head, in.shape.heads, in.shape.kv_heads)),
        q0(std::int64_t{blockIdx.x} * rows),
        tiles(in.tiles.by_query.tiles),
        first(in.tiles.by_query.offsets[blockIdx.x]),
        last(in.tiles.by_query.offsets[blockIdx.x + 1]) {}
};

// The entries a dK, dV block walks: block (blockIdx.x, blockIdx.y) owns keys k0 .. k0 + rows - 1
// of kv head blockIdx.y and meets, for every query head of that kv head's group (grouped-query
// attention: dK, dV are never expanded per query head), the query tiles of its key-major tile
// list over blocks of `rows` keys (DeviceTileList::by_key_blocks_of): entry n is query head
// kv_head group + n / count, query tile tiles[first + n % count]. count 0: no query attends
// these keys.
struct KeyBlockEntries {
  std::int64_t kv_head = 0;
  std::int64_t k0 = 0;
  const hd::TileRef* tiles = nullptr;
  int first = 0;
  int count = 0;
  int group = 0;

  __device__ KeyBlockEntries(const PairInputs& in, int rows)
      : kv_head(blockIdx.y),
        k0(std::int64_t{blockIdx.x} * rows),
        tiles(in.tiles.by_key_blocks_of(rows).tiles),
        first(in.tiles.by_key_blocks_of(rows).offsets[blockIdx.x]),
        count(in.tiles.by_key_blocks_of(rows).offsets[blockIdx.x + 1] - first),
        group(static_cast<int>(in.shape.heads / in.shape.kv_heads)) {}
  [[nodiscard]] __device__ int entries() const { return group * count; }
  [[nodiscard]] __device__ std::int64_t head(int n) const { return kv_head * group + n / count; }
  [[nodiscard]] __device__ hd::TileRef tile(int n) const { return tiles[first + n % count]; }
};

}  // namespace burst::rt::gpu::device
