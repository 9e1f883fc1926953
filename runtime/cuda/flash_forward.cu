// The flash-attention forward of one block pair on tensor cores (flash_attention.hpp).
//
// Grid: one block per (query tile, query head); 4 warps, warp w owns query rows 16w .. 16w + 15
// of the tile. The block walks its query tile's key tiles from the tile list (never the empty
// ones) with the online softmax of hd/online_softmax.hpp, per row in fp32:
//   S = scale Q K^T            (mma, bf16 in, fp32 out; the Q tile stays in shared memory)
//   mask S on Partial tiles    (hd::allowed_keys interval of each row, the block-sparse table)
//   m', alpha, P = exp(S - m') (hd::online_softmax_step; rows with no allowed key stay empty)
//   acc = alpha acc + P V      (P rounded to bf16 in registers as the mma's A operand)
// and at the end O = acc / l, lse = m + log l (hd::finish_row: O = 0, lse = -inf when l = 0).
// The row sum l is kept per thread over its 16 columns and summed over the quad at the end.
//
// Copies overlap the math with cp.async: V of tile j is in flight while S of tile j is
// computed, K of tile j + 1 while P V of tile j is. Grouped-query attention reads K, V of kv head
// h / (heads / kv_heads) in place. Rows past the block's end are zero-filled tiles: padded keys
// have position -1, which no mask interval contains, so they are masked whenever the key tile
// is short; padded query rows are never written.
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/detail/device/warp_tiles.cuh"
#include "runtime/cuda/detail/flash_attention.hpp"
#include "runtime/cuda/detail/flash_checks.hpp"
#include "runtime/cuda/detail/fragment_layout.hpp"
#include "runtime/cuda/detail/kernel_shapes.hpp"
#include "runtime/kernels/hd/index_math.hpp"
#include "runtime/kernels/hd/online_softmax.hpp"

namespace burst::rt::gpu {
namespace {

using device::FastExp;
using device::RowTile;

template <int D>
__global__ void __launch_bounds__(kThreads, 1)
    flash_forward_kernel(const PairInputs in, float* __restrict__ o, float* __restrict__ lse) {
  using Smem = ForwardSmem<D>;
  extern __shared__ __align__(16) unsigned char smem[];
  auto* q_tile = reinterpret_cast<std::uint16_t*>(smem + Smem::q);
  auto* k_tile = reinterpret_cast<std::uint16_t*>(smem + Smem::k);
  auto* v_tile = reinterpret_cast<std::uint16_t*>(smem + Smem::v);
  auto* k_positions = reinterpret_cast<std::int64_t*>(smem + Smem::k_positions);

  const PairShape& shape = in.shape;
  const std::int64_t q_tile_index = blockIdx.x;
  const std::int64_t head = blockIdx.y;
  const std::int64_t kv_head = hd::kv_head_of(head, shape.heads, shape.kv_heads);
  const std::int64_t q0 = q_tile_index * kTileRows;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const float scale = 1.0f / sqrtf(static_cast<float>(D));
  const FastExp exp;

  // The lane's row pair (fragment_layout.hpp): tile rows 16 warp + c_row(lane, 0 and 1).
  std::int64_t row_position[2];
  hd::KeyInterval row_keys[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const std::int64_t token = q0 + warp * 16 + layout::c_row(lane, r);
    row_position[r] = token < shape.q_tokens ? in.q_positions[token] : 0;
    row_keys[r] = token < shape.q_tokens ? hd::allowed_keys(in.mask, row_position[r]) : hd::KeyInterval{};
  }

  const int first = in.tiles.by_query_offsets[q_tile_index];
  const int last = in.tiles.by_query_offsets[q_tile_index + 1];
  device::load_tile_async<D>(q_tile, in.q, q0, shape.q_tokens, shape.heads, head);
  if (first < last) {
    device::load_tile_async<D>(k_tile, in.k, std::int64_t{in.tiles.by_query[first].tile} * kTileRows, shape.k_tokens,
                               shape.kv_heads, kv_head);
  }
  device::copy_async_commit();

  float acc[D / 8][4];
#pragma unroll
  for (int j = 0; j < D / 8; ++j) {
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[j][i] = 0.0f;
  }
  float row_max[2] = {hd::kNegInf, hd::kNegInf};
  float row_sum[2] = {0.0f, 0.0f};  // this thread's 16 columns only

  for (int e = first; e < last; ++e) {
    const hd::TileRef ref = in.tiles.by_query[e];
    const std::int64_t k0 = std::int64_t{ref.tile} * kTileRows;
    device::load_tile_async<D>(v_tile, in.v, k0, shape.k_tokens, shape.kv_heads, kv_head);
    device::copy_async_commit();
    if (threadIdx.x < kTileRows) {
      const std::int64_t token = k0 + threadIdx.x;
      k_positions[threadIdx.x] = token < shape.k_tokens ? in.k_positions[token] : -1;
    }
    device::copy_async_wait<1>();  // Q and this K have landed; V may still be in flight
    __syncthreads();

    RowTile s;
    device::warp_scores<D>(s, q_tile, k_tile, warp, lane);
    const bool masked = ref.kind != hd::TileKind::Full || k0 + kTileRows > shape.k_tokens;
#pragma unroll
    for (int j = 0; j < kTileRows / 8; ++j) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        s[j][i] *= scale;
        if (masked) {
          const int r = layout::c_pair(i);
          const std::int64_t key = k_positions[8 * j + layout::c_col(lane, i)];
          if (!(row_keys[r].contains(key) && hd::sparse_allows(in.mask, row_position[r], key))) s[j][i] = hd::kNegInf;
        }
      }
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float tile_max = hd::kNegInf;
#pragma unroll
      for (int j = 0; j < kTileRows / 8; ++j) tile_max = fmaxf(tile_max, fmaxf(s[j][2 * r], s[j][2 * r + 1]));
      const hd::SoftmaxStep step = hd::online_softmax_step(row_max[r], device::quad_max(tile_max), exp);
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < kTileRows / 8; ++j) {
#pragma unroll
        for (int i = 2 * r; i < 2 * r + 2; ++i) {
          s[j][i] = hd::tile_probability(s[j][i], step, exp);
          sum += s[j][i];
        }
      }
      row_sum[r] = step.alpha * row_sum[r] + sum;
      row_max[r] = step.max;
#pragma unroll
      for (int j = 0; j < D / 8; ++j) {
        acc[j][2 * r] *= step.alpha;
        acc[j][2 * r + 1] *= step.alpha;
      }
    }
    __syncthreads();  // every warp is done with K and the key positions
    if (e + 1 < last) {
      device::load_tile_async<D>(k_tile, in.k, std::int64_t{in.tiles.by_query[e + 1].tile} * kTileRows, shape.k_tokens,
                                 shape.kv_heads, kv_head);
    }
    device::copy_async_commit();
    device::copy_async_wait<1>();  // V has landed; the next K may be in flight
    __syncthreads();
    device::PackedRowTile p;
    device::pack_fragments(p, s);
    device::warp_accumulate<D>(acc, p, v_tile, lane);
    __syncthreads();  // every warp is done with V
  }
  device::copy_async_wait<0>();

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const hd::RowEnd end = hd::finish_row(row_max[r], device::quad_sum(row_sum[r]));
    const std::int64_t token = q0 + warp * 16 + layout::c_row(lane, r);
    if (token >= shape.q_tokens) continue;
    float* out = o + (token * shape.heads + head) * D + layout::c_col(lane, 2 * r);
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      *reinterpret_cast<float2*>(out + 8 * j) =
          make_float2(acc[j][2 * r] * end.inv_sum, acc[j][2 * r + 1] * end.inv_sum);
    }
    if (layout::c_col(lane, 0) == 0) lse[token * shape.heads + head] = end.lse;  // one lane of the quad
  }
}

template <int D>
void launch_forward(const PairInputs& in, float* o, float* lse, cudaStream_t stream) {
  constexpr std::size_t kBytes = ForwardSmem<D>::bytes;
  check_cuda(cudaFuncSetAttribute(flash_forward_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kBytes)),
             "cudaFuncSetAttribute(flash_forward_kernel, MaxDynamicSharedMemorySize)");
  const dim3 grid(static_cast<unsigned>(in.tiles.q_tiles), static_cast<unsigned>(in.shape.heads));
  flash_forward_kernel<D><<<grid, kThreads, kBytes, stream>>>(in, o, lse);
  check_launch("flash_forward_kernel");
}

}  // namespace

void flash_forward(const PairInputs& in, float* o, float* lse, cudaStream_t stream) {
  check_forward_inputs(in, o, lse);
  if (in.shape.q_tokens == 0) return;
  if (in.shape.head_dim == 64) {
    launch_forward<64>(in, o, lse, stream);
  } else {
    launch_forward<128>(in, o, lse, stream);
  }
}

}  // namespace burst::rt::gpu
