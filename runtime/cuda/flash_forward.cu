// The flash-attention forward of one block pair on tensor cores (flash_attention.hpp).
//
// Grid: one block per (query block, query head), ForwardTraits: 128 query rows, each warp
// owning kM = T::kWarpBlocks mma row blocks of 16 (head dim 64: 4 warps of 32 rows, every K and
// V fragment a warp loads feeding both blocks; head dim 128: 8 warps of 16 rows). The block
// walks its key tiles from the query-major tile list (never the empty ones),
// K, V and the key positions of the next tile loading through the TilePipeline's second stage
// while this one is computed. Per tile, with the online softmax of hd/online_softmax.hpp, per
// row in fp32:
//   S = scale Q K^T            (mma, bf16 in, fp32 out; Q read from shared memory)
//   mask S on Partial tiles    (hd::allowed_keys interval of each row, the block-sparse table)
//   m', alpha, P = exp(S - m') (hd::online_softmax_step; rows with no allowed key stay empty)
//   acc = alpha acc + P V      (P rounded to bf16 in registers as the mma's A operand)
// and at the end O = acc / l, lse = m + log l (hd::finish_row: O = 0, lse = -inf when l = 0).
// The row sum l is kept per thread over its 16 columns and summed over the quad at the end.
// A lane sees 2 kM rows: row pair r of row block m, row 16 kM warp + 16 m + c_row(lane, r);
// their positions and allowed key intervals sit in shared memory, read on Partial tiles only.
//
// Grouped-query attention reads K, V of kv head h / (heads / kv_heads) in place. Rows past the
// pair's end are zero-filled: padded keys have position -1, which no mask interval contains, so
// they are masked whenever the key tile is short; padded query rows are never written.
#include "runtime/cuda/detail/device/launch.cuh"
#include "runtime/cuda/device_count.hpp"
#include "runtime/cuda/detail/device/pair_tiles.cuh"
#include "runtime/cuda/detail/device/row_softmax.cuh"
#include "runtime/cuda/detail/device/tile_pipeline.cuh"
#include "runtime/cuda/detail/device/warp_tiles.cuh"
#include "runtime/cuda/detail/flash_attention.hpp"
#include "runtime/cuda/detail/flash_checks.hpp"
#include "runtime/cuda/detail/flash_paths.hpp"
#include "runtime/cuda/detail/fragment_layout.hpp"
#include "runtime/cuda/detail/kernel_traits.hpp"
#include "runtime/kernels/hd/index_math.hpp"

namespace burst::rt::gpu {
namespace {

using device::FastExp;
using device::RowTile;

template <class T>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    flash_forward_kernel(const PairInputs in, float* __restrict__ o, float* __restrict__ lse) {
  constexpr int D = T::kHeadDim;
  constexpr int kM = T::kWarpBlocks;
  static_assert(T::kTileRows == device::kScoreCols);
  using Smem = ForwardSmem<T>;
  extern __shared__ __align__(16) unsigned char smem[];
  auto* q_tile = reinterpret_cast<std::uint16_t*>(smem + Smem::q);
  auto k_tile = [&](int stage) { return reinterpret_cast<std::uint16_t*>(smem + Smem::k + stage * Smem::kTile); };
  auto v_tile = [&](int stage) { return reinterpret_cast<std::uint16_t*>(smem + Smem::v + stage * Smem::kTile); };
  auto k_positions = [&](int stage) {
    return reinterpret_cast<std::int64_t*>(smem + Smem::k_positions) + stage * T::kTileRows;
  };
  auto* q_positions = reinterpret_cast<std::int64_t*>(smem + Smem::q_positions);
  auto* key_lo = reinterpret_cast<std::int64_t*>(smem + Smem::key_lo);
  auto* key_hi = reinterpret_cast<std::int64_t*>(smem + Smem::key_hi);

  const PairShape& shape = in.shape;
  const device::QueryBlock block(in, T::kRows);
  const std::int64_t head = block.head, q0 = block.q0;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int row0 = warp * 16 * kM;  // the warp's first row in the block
  const float scale = 1.0f / sqrtf(static_cast<float>(D));
  const FastExp exp;

  const device::TilePipeline<T::kStages> pipe{block.first, block.last};
  auto load = [&](int e, int stage) {
    device::load_key_tile_async<T>(k_tile(stage), v_tile(stage), k_positions(stage), in, block.tiles[e].tile,
                                   block.kv_head);
  };
  if (pipe.first < pipe.last) {
    device::load_tile_async<D, T::kRows, T::kThreads>(q_tile, in.q, q0, shape.q_tokens, shape.heads, head);
    for (int r = static_cast<int>(threadIdx.x); r < T::kRows; r += T::kThreads) {
      const std::int64_t token = q0 + r;
      const std::int64_t position = token < shape.q_tokens ? in.q_positions[token] : 0;
      const hd::KeyInterval keys = token < shape.q_tokens ? hd::allowed_keys(in.mask, position) : hd::KeyInterval{};
      q_positions[r] = position;
      key_lo[r] = keys.lo;
      key_hi[r] = keys.hi;
    }
  }
  pipe.start(load);

  float acc[kM][D / 8][4];
#pragma unroll
  for (int m = 0; m < kM; ++m) device::zero_blocks(acc[m]);
  float row_max[kM][2], row_sum[kM][2];  // row_sum: this thread's 16 columns only
#pragma unroll
  for (int m = 0; m < kM; ++m) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_max[m][r] = hd::kNegInf;
      row_sum[m][r] = 0.0f;
    }
  }

  for (int e = pipe.first; e < pipe.last; ++e) {
    const int stage = pipe.advance(e, load);
    const hd::TileRef ref = block.tiles[e];
    const std::int64_t k0 = std::int64_t{ref.tile} * T::kTileRows;

    RowTile s[kM];
    device::warp_scores_rows<D, kM>(s, q_tile, k_tile(stage), row0, lane);
    const bool masked = device::key_tile_masked(ref, k0, T::kTileRows, shape.k_tokens);
    device::PackedRowTile p[kM];
#pragma unroll
    for (int m = 0; m < kM; ++m) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        if (masked) {
          const int row = row0 + 16 * m + layout::c_row(lane, r);
          const std::int64_t* keys = k_positions(stage);
          device::mask_row_pair(s[m], r, lane, {q_positions[row], {key_lo[row], key_hi[row]}}, in.mask,
                                [&](int col) { return keys[col]; });
        }
        const float alpha = device::softmax_row_pair(s[m], r, scale, row_max[m][r], row_sum[m][r], exp);
        device::rescale_row_pair(acc[m], r, alpha);
      }
      device::pack_fragments(p[m], s[m]);
    }
    device::warp_accumulate_rows<D, D / 8, kM>(acc, p, v_tile(stage), 0, lane);
  }
  pipe.drain();

#pragma unroll
  for (int m = 0; m < kM; ++m) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const hd::RowEnd end = device::end_row_pair(row_max[m][r], row_sum[m][r]);  // every lane: it shuffles
      const std::int64_t token = q0 + row0 + 16 * m + layout::c_row(lane, r);
      if (token < shape.q_tokens) device::store_row_pair<D>(o, lse, acc[m], r, lane, end, token, shape.heads, head);
    }
  }
}

template <int D>
void launch_forward(const PairInputs& in, float* o, float* lse, cudaStream_t stream) {
  using T = ForwardTraits<D>;
  const dim3 grid(static_cast<unsigned>(in.tiles.by_query.blocks), static_cast<unsigned>(in.shape.heads));
  launch(flash_forward_kernel<T>, grid, dim3(T::kThreads), ForwardSmem<T>::bytes, stream, "flash_forward_kernel", in, o,
         lse);
}

}  // namespace

void flash_forward_mma_sync(const PairInputs& in, float* o, float* lse, cudaStream_t stream) {
  with_head_dim(in.shape.head_dim, [&]<int D>() { launch_forward<D>(in, o, lse, stream); });
}

KernelPath flash_forward(const PairInputs& in, float* o, float* lse, cudaStream_t stream, KernelPathChoice choice) {
  check_forward_inputs(in, o, lse);
  const bool aligned = tma_aligned(in.q) && tma_aligned(in.k) && tma_aligned(in.v);
  const KernelPath path = choose_path(choice, current_device_arch(), aligned, "flash_forward");
  if (in.shape.q_tokens == 0) return path;
  if (path == KernelPath::Wgmma) {
    flash_forward_wgmma(in, o, lse, stream);
  } else {
    flash_forward_mma_sync(in, o, lse, stream);
  }
  return path;
}

}  // namespace burst::rt::gpu
