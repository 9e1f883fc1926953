// The forward's per-row arithmetic on a warp's 16 x 64 score block (device only), shared by both
// forward paths: the Ampere path's mma.sync fragments and the Hopper path's wgmma accumulators
// have the same per-warp layout (wgmma_layout.hpp), so one set of functions masks, normalises
// and writes both. A lane holds two rows of a 16-row block, its row pair r = 0, 1 (elements
// 2 r, 2 r + 1 of every 8-column block); per row, in fp32, with hd/online_softmax.hpp:
//   mask_row_pair     scores of keys the mask forbids become -inf (Partial tiles only)
//   softmax_row_pair  S scaled, m' = max(m, tile max over the quad), P = exp(S - m'), l updated
//                     (this lane's 16 columns; summed over the quad at the end); returns alpha
//   rescale_row_pair  the output accumulator times alpha
//   end_row_pair      l summed over the quad, then 1 / l and lse = m + log l (lse = -inf for a
//                     row with no key); every lane of the warp calls it (it shuffles)
//   store_row_pair    O = acc / l and the lse, for a row past the pair's end never called
#pragma once

#include <cstdint>

#include "runtime/cuda/detail/device/warp_tiles.cuh"
#include "runtime/cuda/detail/fragment_layout.hpp"
#include "runtime/kernels/hd/mask.hpp"
#include "runtime/kernels/hd/online_softmax.hpp"

namespace burst::rt::gpu::device {

// A query row's global position and the key interval its mask allows.
struct QueryRow {
  std::int64_t position = 0;
  hd::KeyInterval allowed;
};

// key_at(column) is the global position of the tile's key in that column (-1 or past the
// pair's end: a key no interval contains).
template <class KeyAt>
__device__ inline void mask_row_pair(RowTile& s, int r, int lane, const QueryRow& row, const hd::MaskView& mask,
                                     const KeyAt& key_at) {
#pragma unroll
  for (int j = 0; j < kScoreCols / 8; ++j) {
#pragma unroll
    for (int i = 2 * r; i < 2 * r + 2; ++i) {
      const std::int64_t key = key_at(8 * j + layout::c_col(lane, i));
      if (!(row.allowed.contains(key) && hd::sparse_allows(mask, row.position, key))) s[j][i] = hd::kNegInf;
    }
  }
}

template <class Exp>
__device__ inline float softmax_row_pair(RowTile& s, int r, float scale, float& row_max, float& row_sum,
                                         const Exp& exp) {
  float tile_max = hd::kNegInf;
#pragma unroll
  for (int j = 0; j < kScoreCols / 8; ++j) {
#pragma unroll
    for (int i = 2 * r; i < 2 * r + 2; ++i) {
      s[j][i] *= scale;
      tile_max = fmaxf(tile_max, s[j][i]);
    }
  }
  const hd::SoftmaxStep step = hd::online_softmax_step(row_max, quad_max(tile_max), exp);
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < kScoreCols / 8; ++j) {
#pragma unroll
    for (int i = 2 * r; i < 2 * r + 2; ++i) {
      s[j][i] = hd::tile_probability(s[j][i], step, exp);
      sum += s[j][i];
    }
  }
  row_sum = step.alpha * row_sum + sum;
  row_max = step.max;
  return step.alpha;
}

template <int kBlocks>
__device__ inline void rescale_row_pair(float (&acc)[kBlocks][4], int r, float alpha) {
#pragma unroll
  for (int j = 0; j < kBlocks; ++j) {
    acc[j][2 * r] *= alpha;
    acc[j][2 * r + 1] *= alpha;
  }
}

__device__ inline hd::RowEnd end_row_pair(float row_max, float row_sum) {
  return hd::finish_row(row_max, quad_sum(row_sum));
}

// Row pair r of a D-column accumulator, for query `token`. One lane of the quad writes the lse.
template <int D>
__device__ inline void store_row_pair(float* o, float* lse, const float (&acc)[D / 8][4], int r, int lane,
                                      const hd::RowEnd& end, std::int64_t token, std::int64_t heads,
                                      std::int64_t head) {
  float* out = o + (token * heads + head) * D + layout::c_col(lane, 2 * r);
#pragma unroll
  for (int j = 0; j < D / 8; ++j) {
    *reinterpret_cast<float2*>(out + 8 * j) = make_float2(acc[j][2 * r] * end.inv_sum, acc[j][2 * r + 1] * end.inv_sum);
  }
  if (layout::c_col(lane, 0) == 0) lse[token * heads + head] = end.lse;
}

}  // namespace burst::rt::gpu::device
