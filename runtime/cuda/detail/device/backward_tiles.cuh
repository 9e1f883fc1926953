// The backward's element arithmetic on a warp's 16 x 64 block (device only), shared by both
// backward paths: the Ampere path's mma.sync fragments and the Hopper path's wgmma accumulators
// have the same per-warp layout (wgmma_layout.hpp), so one set of functions serves both.
//
// With the final lse and D = rowsum(O * dO) of every query row (attention.hpp):
//   P = exp(scale S - lse) where the mask allows the pair (0 elsewhere, and for a row with no key
//   at all: lse = -inf, hd::probability_from_lse), dS = P (dP - D).
// The dK, dV pass holds the transposes (its warp's rows are keys, the columns a query tile):
//   key_row_probabilities   S^T -> P^T, per column the query's position, lse from the tile
//   key_row_score_gradient  dP^T -> dS^T = P^T (dP^T - D), P^T as the bf16 fragments that fed dV
// The dQ pass holds them as they are (rows are its queries, columns a key tile):
//   query_row_probabilities S -> P, per row the lane's query scalars
//   query_row_score_gradient dP -> dS
// and each pass adds its warp's rows to the fp32 gradients at the end (add_key_rows: dK times
// the softmax scale, and dV; add_query_rows: dQ times the scale), rows past the pair's end never.
#pragma once

#include <cstdint>

#include "runtime/cuda/detail/device/row_softmax.cuh"
#include "runtime/cuda/detail/flash_attention.hpp"
#include "runtime/cuda/detail/device/warp_tiles.cuh"
#include "runtime/cuda/detail/fragment_layout.hpp"
#include "runtime/kernels/hd/mask.hpp"
#include "runtime/kernels/hd/online_softmax.hpp"

namespace burst::rt::gpu::device {

// key_of(r): the global position of the lane's key row of row pair r (-1 past the pair's end),
// read only for a masked tile; queries, lse: per column of the tile. `masked`: the tile has
// forbidden pairs (a Partial tile, or a key block running past the pair's end).
template <class KeyOf, class Exp>
__device__ inline void key_row_probabilities(RowTile& s, int lane, const KeyOf& key_of, const std::int64_t* queries,
                                             const float* lse, const hd::MaskView& mask, bool masked, float scale,
                                             const Exp& exp) {
#pragma unroll
  for (int j = 0; j < kScoreCols / 8; ++j) {
    hd::KeyInterval allowed[2];  // of this lane's two query columns of block j
    if (masked) {
#pragma unroll
      for (int c = 0; c < 2; ++c) allowed[c] = hd::allowed_keys(mask, queries[8 * j + layout::c_col(lane, c)]);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int query = 8 * j + layout::c_col(lane, i);
      float score = s[j][i] * scale;
      if (masked) {
        const std::int64_t key = key_of(layout::c_pair(i));
        if (!(allowed[i % 2].contains(key) && hd::sparse_allows(mask, queries[query], key))) score = hd::kNegInf;
      }
      s[j][i] = hd::probability_from_lse(score, lse[query], exp);
    }
  }
}

__device__ inline void key_row_score_gradient(RowTile& ds, const PackedRowTile& p, const float* delta, int lane) {
#pragma unroll
  for (int j = 0; j < kScoreCols / 8; ++j) {
#pragma unroll
    for (int i = 0; i < 4; ++i) ds[j][i] = packed_element(p, j, i) * (ds[j][i] - delta[8 * j + layout::c_col(lane, i)]);
  }
}

// What the dQ pass needs of a lane's two query rows (row pair 0, 1), rows row0 + c_row(lane, r)
// of query head `head`: position and allowed keys, the final lse and D. A row past the pair's
// end gets lse = -inf (so P = 0 and dS = 0) and D = 0.
struct QueryRowScalars {
  QueryRow rows[2];
  float lse[2];
  float delta[2];
  __device__ QueryRowScalars(const PairInputs& in, const BackwardInputs& grad_in, std::int64_t row0, int lane,
                             std::int64_t head) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const std::int64_t token = row0 + layout::c_row(lane, r);
      const bool valid = token < in.shape.q_tokens;
      if (valid) rows[r] = {in.q_positions[token], hd::allowed_keys(in.mask, in.q_positions[token])};
      lse[r] = valid ? grad_in.lse[token * in.shape.heads + head] : hd::kNegInf;
      delta[r] = valid ? grad_in.delta[token * in.shape.heads + head] : 0.0f;
    }
  }
};

// rows: the lane's two query rows (row pair 0, 1); key_at(column): the global position of the
// tile's key in that column (-1 or past the pair's end: a key no interval contains).
template <class KeyAt, class Exp>
__device__ inline void query_row_probabilities(RowTile& p, const QueryRow (&rows)[2], const float (&lse)[2],
                                               const KeyAt& key_at, int lane, const hd::MaskView& mask, bool masked,
                                               float scale, const Exp& exp) {
#pragma unroll
  for (int j = 0; j < kScoreCols / 8; ++j) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = layout::c_pair(i);
      float score = p[j][i] * scale;
      if (masked) {
        const std::int64_t key = key_at(8 * j + layout::c_col(lane, i));
        if (!(rows[r].allowed.contains(key) && hd::sparse_allows(mask, rows[r].position, key))) score = hd::kNegInf;
      }
      p[j][i] = hd::probability_from_lse(score, lse[r], exp);
    }
  }
}

__device__ inline void query_row_score_gradient(RowTile& ds, const RowTile& p, const float (&delta)[2]) {
#pragma unroll
  for (int j = 0; j < kScoreCols / 8; ++j) {
#pragma unroll
    for (int i = 0; i < 4; ++i) ds[j][i] = p[j][i] * (ds[j][i] - delta[layout::c_pair(i)]);
  }
}

// row0: the global key row of the warp's first row.
template <int D>
__device__ inline void add_key_rows(const Gradients& out, const float (&d_k)[D / 8][4], const float (&d_v)[D / 8][4],
                                    float scale, std::int64_t row0, int lane, const PairShape& shape,
                                    std::int64_t kv_head) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const std::int64_t token = row0 + layout::c_row(lane, r);
    if (token >= shape.k_tokens) continue;
    const std::int64_t row = (token * shape.kv_heads + kv_head) * D + layout::c_col(lane, 2 * r);
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      auto* dk = reinterpret_cast<float2*>(out.d_k + row + 8 * j);
      auto* dv = reinterpret_cast<float2*>(out.d_v + row + 8 * j);
      const float2 k_old = *dk, v_old = *dv;
      *dk = make_float2(k_old.x + scale * d_k[j][2 * r], k_old.y + scale * d_k[j][2 * r + 1]);
      *dv = make_float2(v_old.x + d_v[j][2 * r], v_old.y + d_v[j][2 * r + 1]);
    }
  }
}

// row0: the global query row of the warp's first row.
template <int D>
__device__ inline void add_query_rows(float* d_q, const float (&acc)[D / 8][4], float scale, std::int64_t row0,
                                      int lane, const PairShape& shape, std::int64_t head) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const std::int64_t token = row0 + layout::c_row(lane, r);
    if (token >= shape.q_tokens) continue;
    float* row = d_q + (token * shape.heads + head) * D + layout::c_col(lane, 2 * r);
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      auto* dq = reinterpret_cast<float2*>(row + 8 * j);
      const float2 old = *dq;
      *dq = make_float2(old.x + scale * acc[j][2 * r], old.y + scale * acc[j][2 * r + 1]);
    }
  }
}

}  // namespace burst::rt::gpu::device
