// Tile-level building blocks of the attention kernels (device only), on the shared-memory
// layout of kernel_traits.hpp: bf16 tiles, each row D (+ kRowPad) elements.
//
// Warp w of a block owns rows 16w .. 16w + 15 of its side and works against walked tiles of
// kScoreCols rows of the other side. A warp's 16 x 64 result is 8 blocks of 16 x 8 mma
// accumulators; block j, register i of a lane holds row c_element(lane, i).row and column
// 8 j + c_element(lane, i).col (fragment_layout.hpp): each lane sees two rows (g = lane / 4
// and g + 8, its "row pair") and 16 columns, and a row's 64 values are spread over the 4
// lanes of a quad (lane ^ 1, lane ^ 2).
//
//   load_tile_async      rows [first, first + kRows) of one head of a [tokens, heads, D] tensor
//   load_rows_async      the same for one value per row (positions, lse, D), with a fill value
//   warp_scores          S[16 x 64] = A_w B^T   (A_w the warp's 16 rows of tile A; warp_scores_rows:
//                        kM row blocks of 16, each B fragment feeding kM products)
//   pack_fragments       a warp's 16 x 64 fragments as bf16 A operands (P feeds P V in registers)
//   warp_accumulate      acc[16 x D] += P B     (P packed fragments, B a [64][D] tile; or
//                        warp_accumulate_columns: only some 8-column blocks of the product;
//                        warp_accumulate_rows: kM row blocks)
//   warp_accumulate_tn   acc[16 x 8 kBlocks] += A B with A stored transposed ([64][warp cols])
#pragma once

#include <cstdint>

#include "common/bf16.hpp"
#include "runtime/cuda/detail/device/warp_mma.cuh"
#include "runtime/cuda/detail/fragment_layout.hpp"
#include "runtime/cuda/detail/kernel_traits.hpp"

namespace burst::rt::gpu::device {

// Columns of a warp's score block: every walked tile has this many rows.
inline constexpr int kScoreCols = 64;

// Fragments of a warp's 16 x 64 result.
using RowTile = float[kScoreCols / 8][4];

// Zeroes kBlocks 16 x 8 accumulator blocks (a score tile, an output or gradient accumulator).
template <int kBlocks>
__device__ inline void zero_blocks(float (&acc)[kBlocks][4]) {
#pragma unroll
  for (int j = 0; j < kBlocks; ++j) {
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[j][i] = 0.0f;
  }
}

// Queues the copy of rows [first, first + kRows) of head `head` of a [tokens, heads, D] bf16
// tensor into a shared tile (rows D + kRowPad apart); rows at or past `tokens` become zeros.
// All kThreads threads take part.
template <int D, int kRows, int kThreads>
__device__ inline void load_tile_async(std::uint16_t* tile, const Bf16* src, std::int64_t first, std::int64_t tokens,
                                       std::int64_t heads, std::int64_t head) {
  constexpr int kChunks = D / 8;  // 16-byte chunks per row
#pragma unroll
  for (int c = static_cast<int>(threadIdx.x); c < kRows * kChunks; c += kThreads) {
    const int row = c / kChunks, chunk = c % kChunks;
    const std::int64_t token = first + row;
    const bool valid = token < tokens;
    const Bf16* from = valid ? src + (token * heads + head) * D + chunk * 8 : src;
    copy_async_16(tile + row * (D + kRowPad) + chunk * 8, from, valid);
  }
}

// Queues the copy of one value per row, row r from src[(first + r) * heads + head]; rows at or
// past `tokens` get `fill`, stored at once (the barrier that publishes the copies publishes it).
template <int kRows, int kThreads, typename T>
__device__ inline void load_rows_async(T* dst, const T* src, std::int64_t first, std::int64_t tokens,
                                       std::int64_t heads, std::int64_t head, T fill) {
  for (int r = static_cast<int>(threadIdx.x); r < kRows; r += kThreads) {
    const std::int64_t token = first + r;
    if (token < tokens) {
      copy_async_small(dst + r, src + token * heads + head);
    } else {
      dst[r] = fill;
    }
  }
}

// S[16 kM x 64] = A B^T for kM row blocks of 16: A rows row0 .. row0 + 16 kM - 1 of a
// [rows][D + kRowPad] tile, B the 64 rows of a [64][D + kRowPad] tile. Each B fragment loaded
// feeds kM products, so a warp of more rows reads less shared memory per product.
template <int D, int kM>
__device__ inline void warp_scores_rows(RowTile (&s)[kM], const std::uint16_t* a_tile, const std::uint16_t* b_tile,
                                        int row0, int lane) {
  constexpr int kStride = D + kRowPad;
  const layout::Coord a_at = layout::a_address(lane);
  const layout::Coord b_at = layout::b_pair_address_from_nk(lane);  // (row of b_tile, column)
#pragma unroll
  for (int m = 0; m < kM; ++m) zero_blocks(s[m]);
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    std::uint32_t a[kM][4];
#pragma unroll
    for (int m = 0; m < kM; ++m) ldmatrix_x4(a[m], a_tile + (row0 + 16 * m + a_at.row) * kStride + kk * 16 + a_at.col);
#pragma unroll
    for (int np = 0; np < kScoreCols / 16; ++np) {
      std::uint32_t b[4];
      ldmatrix_x4(b, b_tile + (np * 16 + b_at.row) * kStride + kk * 16 + b_at.col);
#pragma unroll
      for (int m = 0; m < kM; ++m) {
        mma_bf16(s[m][2 * np], a[m], b[0], b[1]);
        mma_bf16(s[m][2 * np + 1], a[m], b[2], b[3]);
      }
    }
  }
}

// One row block: the warp's 16 rows 16 warp .. of tile A.
template <int D>
__device__ inline void warp_scores(RowTile& s, const std::uint16_t* a_tile, const std::uint16_t* b_tile, int warp,
                                   int lane) {
  warp_scores_rows<D, 1>(reinterpret_cast<RowTile(&)[1]>(s), a_tile, b_tile, warp * 16, lane);
}

// The same 16 x 64 fragments rounded to bf16 and packed as the mma's A operand: entry kk
// covers columns [16 kk, 16 kk + 16), i.e. the 8-column blocks 2 kk and 2 kk + 1.
using PackedRowTile = std::uint32_t[kScoreCols / 16][4];

__device__ inline void pack_fragments(PackedRowTile& a, const RowTile& p) {
#pragma unroll
  for (int kk = 0; kk < kScoreCols / 16; ++kk) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const layout::CSource from = layout::a_register_source(j);
      const float(&c)[4] = p[2 * kk + from.block];
      a[kk][j] = pack_bf16(c[from.first_element], c[from.first_element + 1]);
    }
  }
}

// Element (block j, register i) of packed fragments, back as a float (the inverse of packing).
__device__ inline float packed_element(const PackedRowTile& a, int j, int i) {
  const layout::ARegister at = layout::a_register_of(j % 2, i);
  const std::uint32_t pair = a[j / 2][at.index];
  return __uint_as_float(at.half == 0 ? pair << 16 : pair & 0xffff0000u);
}

// acc[m][16 x 8 kBlocks] += P[m] B[:, 8 first_block ..] for kM row blocks: kBlocks 8-column
// blocks of the product, each B fragment loaded once for the kM products.
template <int D, int kBlocks, int kM>
__device__ inline void warp_accumulate_rows(float (&acc)[kM][kBlocks][4], const PackedRowTile (&p)[kM],
                                            const std::uint16_t* b_tile, int first_block, int lane) {
  constexpr int kStride = D + kRowPad;
  const layout::Coord b_at = layout::b_pair_address_from_kn(lane);  // (row of b_tile, column)
#pragma unroll
  for (int kk = 0; kk < kScoreCols / 16; ++kk) {
#pragma unroll
    for (int dp = 0; dp < kBlocks / 2; ++dp) {
      std::uint32_t b[4];
      ldmatrix_x4_trans(b, b_tile + (kk * 16 + b_at.row) * kStride + first_block * 8 + dp * 16 + b_at.col);
#pragma unroll
      for (int m = 0; m < kM; ++m) {
        mma_bf16(acc[m][2 * dp], p[m][kk], b[0], b[1]);
        mma_bf16(acc[m][2 * dp + 1], p[m][kk], b[2], b[3]);
      }
    }
  }
}

template <int D, int kBlocks>
__device__ inline void warp_accumulate_columns(float (&acc)[kBlocks][4], const PackedRowTile& p,
                                               const std::uint16_t* b_tile, int first_block, int lane) {
  warp_accumulate_rows<D, kBlocks, 1>(reinterpret_cast<float(&)[1][kBlocks][4]>(acc),
                                      reinterpret_cast<const PackedRowTile(&)[1]>(p), b_tile, first_block, lane);
}

template <int D>
__device__ inline void warp_accumulate(float (&acc)[D / 8][4], const PackedRowTile& p, const std::uint16_t* b_tile,
                                       int lane) {
  warp_accumulate_columns<D, D / 8>(acc, p, b_tile, 0, lane);
}

// acc[16 x 8 kBlocks] += A[16 x 64] B[64 x (columns 8 first_block ..)] where A^T is stored in
// shared memory as a_t[64][kScoreCols + kRowPad] (row = the summed index, column = the warp's
// rows 16 warp ..) and B is a [64][D] tile.
template <int D, int kBlocks>
__device__ inline void warp_accumulate_tn(float (&acc)[kBlocks][4], const std::uint16_t* a_t,
                                          const std::uint16_t* b_tile, int first_block, int warp, int lane) {
  constexpr int kStride = D + kRowPad;
  constexpr int kStrideA = kScoreCols + kRowPad;
  const layout::Coord a_at = layout::a_address_from_transposed(lane);  // (row of a_t, column)
  const layout::Coord b_at = layout::b_pair_address_from_kn(lane);
#pragma unroll
  for (int kk = 0; kk < kScoreCols / 16; ++kk) {
    std::uint32_t a[4];
    ldmatrix_x4_trans(a, a_t + (kk * 16 + a_at.row) * kStrideA + warp * 16 + a_at.col);
#pragma unroll
    for (int dp = 0; dp < kBlocks / 2; ++dp) {
      std::uint32_t b[4];
      ldmatrix_x4_trans(b, b_tile + (kk * 16 + b_at.row) * kStride + first_block * 8 + dp * 16 + b_at.col);
      mma_bf16(acc[2 * dp], a, b[0], b[1]);
      mma_bf16(acc[2 * dp + 1], a, b[2], b[3]);
    }
  }
}

// Max and sum of a row over the 4 lanes of a quad.
__device__ inline float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ inline float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

}  // namespace burst::rt::gpu::device
