// A block pair's walked key tiles as one load (device only): the kernels that walk key tiles
// (the forward and the dQ pass, query-major) queue, per pipeline stage, the tile's K and V rows
// of their kv head and the keys' positions (past the pair's end: zero rows, position -1).
#pragma once

#include <cstdint>

#include "runtime/cuda/detail/device/warp_tiles.cuh"
#include "runtime/cuda/detail/flash_attention.hpp"

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

}  // namespace burst::rt::gpu::device
