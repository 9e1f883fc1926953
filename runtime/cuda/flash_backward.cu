// The flash-attention backward of one block pair on tensor cores (flash_attention.hpp).
//
// Given the final lse and D = rowsum(O * dO) of every query row, a pair adds
//   P = exp(S - lse)   dV += P^T dO   dP = dO V^T   dS = P (dP - D)
//   dQ += scale dS K   dK += scale dS^T Q
// (attention.hpp), recomputing S from Q and K. P is 0 where lse = -inf (a row with no allowed
// key anywhere) and where the mask says no (hd::probability_from_lse of a -inf score).
//
// Main kernel, flash_backward_kv_kernel (KvTraits): one block per (key block, kv head), so it
// owns its rows of dK and dV outright (64 at head dim 64, 128 at 128: kv_block_rows) and
// accumulates them in fp32 registers for the whole call. Warp w owns key rows 16w .. 16w + 15
// and computes the transposed products, whose
// fragments are already what the next mma needs:
//   S^T = K Q^T, dP^T = V dO^T         (warp_scores: its 16 keys x the tile's 64 queries)
//   dV += P^T dO, dK += dS^T Q          (warp_accumulate: P^T, dS^T as bf16 A fragments)
// It walks every query head of its kv head's group (grouped-query attention: dK, dV are never
// expanded per query head) and, per head, the query tiles of its key block from the key-major
// tile list: one pipeline entry per (head, query tile), the next entry's Q, dO and its rows'
// positions, lse and D loading (device/tile_pipeline.cuh) while this one is computed.
// dQ rows are shared by every key tile, so they cannot be owned here:
//   atomic         (head dim 64 unless deterministic; kAtomicDqPays) dS^T goes to shared
//                  memory, each warp takes 16 query rows of dQ = dS K (warp_accumulate_tn) and
//                  adds them with fp32 atomicAdd
//   two passes     no atomics: flash_backward_dq_kernel (DqTraits), one block per (query block
//                  of 128 rows, query head), recomputes S, P, dP, dS over its key tiles (K, V
//                  pipelined like the forward's) and owns its dQ rows (the order of every sum
//                  is fixed, so runs are bitwise repeatable): the deterministic backward, and
//                  the only one at head dim 128.
// Padding: query rows past the pair get lse = -inf (P = 0, so dS = 0 whatever the mask says);
// key rows past it have position -1 (masked whenever the key tile is short); neither is ever
// written.
#include "runtime/cuda/detail/device/backward_tiles.cuh"
#include "runtime/cuda/detail/device/launch.cuh"
#include "runtime/cuda/detail/device/pair_tiles.cuh"
#include "runtime/cuda/detail/device/tile_pipeline.cuh"
#include "runtime/cuda/detail/device/warp_tiles.cuh"
#include "runtime/cuda/detail/flash_attention.hpp"
#include "runtime/cuda/detail/flash_checks.hpp"
#include "runtime/cuda/detail/flash_paths.hpp"
#include "runtime/cuda/device_count.hpp"
#include "runtime/cuda/detail/fragment_layout.hpp"
#include "runtime/cuda/detail/kernel_traits.hpp"
#include "runtime/kernels/hd/index_math.hpp"
#include "runtime/kernels/hd/online_softmax.hpp"

namespace burst::rt::gpu {
namespace {

using device::FastExp;
using device::RowTile;
using device::zero_blocks;

// 8-column blocks of dQ a warp computes per pass in the atomic path (fewer live registers than
// all of D).
constexpr int kBlocksPerPass = 4;

template <class T, bool kAtomicDq>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    flash_backward_kv_kernel(const PairInputs in, const BackwardInputs grad_in, const Gradients out) {
  constexpr int D = T::kHeadDim;
  // The key-major lists come in two block sizes (DeviceTileList::by_key_blocks_of). In the atomic
  // dQ path warp w also takes query rows 16w .. of the tile: as many warps as key blocks of 16 and
  // query blocks of 16.
  static_assert(T::kRows == kKeyBlockRows || T::kRows == kWideKeyBlockRows);
  static_assert(T::kTileRows == device::kScoreCols && (!kAtomicDq || T::kRows == device::kScoreCols));
  using Smem = KvSmem<T, kAtomicDq>;
  extern __shared__ __align__(16) unsigned char smem[];
  auto* k_tile = reinterpret_cast<std::uint16_t*>(smem + Smem::k);
  auto* v_tile = reinterpret_cast<std::uint16_t*>(smem + Smem::v);
  auto q_tile = [&](int stage) { return reinterpret_cast<std::uint16_t*>(smem + Smem::q + stage * Smem::kTile); };
  auto do_tile = [&](int stage) { return reinterpret_cast<std::uint16_t*>(smem + Smem::d_o + stage * Smem::kTile); };
  auto* ds_t_tile = reinterpret_cast<std::uint16_t*>(smem + Smem::d_s);  // dS^T [key][query]
  auto* k_positions = reinterpret_cast<std::int64_t*>(smem + Smem::k_positions);
  auto q_positions = [&](int stage) {
    return reinterpret_cast<std::int64_t*>(smem + Smem::q_positions) + stage * T::kTileRows;
  };
  auto row_lse = [&](int stage) { return reinterpret_cast<float*>(smem + Smem::lse) + stage * T::kTileRows; };
  auto row_delta = [&](int stage) { return reinterpret_cast<float*>(smem + Smem::delta) + stage * T::kTileRows; };

  const PairShape& shape = in.shape;
  const device::KeyBlockEntries walk(in, T::kRows);
  if (walk.count == 0) return;  // no query attends these keys: nothing to add
  const std::int64_t kv_head = walk.kv_head, k0 = walk.k0;

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const float scale = 1.0f / sqrtf(static_cast<float>(D));
  const bool keys_short = k0 + T::kRows > shape.k_tokens;
  const FastExp exp;

  const device::TilePipeline<T::kStages> pipe{0, walk.entries()};
  auto load = [&](int n, int stage) {
    const std::int64_t head = walk.head(n);
    const std::int64_t q0 = std::int64_t{walk.tile(n).tile} * T::kTileRows;
    device::load_tile_async<D, T::kTileRows, T::kThreads>(q_tile(stage), in.q, q0, shape.q_tokens, shape.heads, head);
    device::load_tile_async<D, T::kTileRows, T::kThreads>(do_tile(stage), grad_in.d_o, q0, shape.q_tokens, shape.heads,
                                                          head);
    device::load_rows_async<T::kTileRows, T::kThreads>(q_positions(stage), in.q_positions, q0, shape.q_tokens,
                                                       std::int64_t{1}, std::int64_t{0}, std::int64_t{0});
    device::load_rows_async<T::kTileRows, T::kThreads>(row_lse(stage), grad_in.lse, q0, shape.q_tokens, shape.heads,
                                                       head, hd::kNegInf);
    device::load_rows_async<T::kTileRows, T::kThreads>(row_delta(stage), grad_in.delta, q0, shape.q_tokens, shape.heads,
                                                       head, 0.0f);
  };
  device::load_tile_async<D, T::kRows, T::kThreads>(k_tile, in.k, k0, shape.k_tokens, shape.kv_heads, kv_head);
  device::load_tile_async<D, T::kRows, T::kThreads>(v_tile, in.v, k0, shape.k_tokens, shape.kv_heads, kv_head);
  device::load_rows_async<T::kRows, T::kThreads>(k_positions, in.k_positions, k0, shape.k_tokens, std::int64_t{1},
                                                 std::int64_t{0}, std::int64_t{-1});
  pipe.start(load);

  float d_k[D / 8][4];
  zero_blocks<D / 8>(d_k);
  float d_v[D / 8][4];
  zero_blocks<D / 8>(d_v);

  for (int n = pipe.first; n < pipe.last; ++n) {
    const int stage = pipe.advance(n, load);
    const std::int64_t head = walk.head(n);
    const hd::TileRef ref = walk.tile(n);
    const std::int64_t q0 = std::int64_t{ref.tile} * T::kTileRows;
    const std::int64_t* queries = q_positions(stage);
    const float* lse = row_lse(stage);
    const float* delta = row_delta(stage);

    // P^T: the warp's 16 keys (rows g, g + 8) x the tile's 64 queries.
    RowTile s;
    device::warp_scores<D>(s, k_tile, q_tile(stage), warp, lane);
    device::key_row_probabilities(
        s, lane, [&](int r) { return k_positions[warp * 16 + layout::c_row(lane, r)]; }, queries, lse, in.mask,
        ref.kind != hd::TileKind::Full || keys_short, scale, exp);
    // P^T stays only as bf16 (what the mma reads anyway): dK, dV and P^T in fp32 together
    // would not fit the 255 registers at D = 128 without spilling.
    device::PackedRowTile p;
    device::pack_fragments(p, s);
    device::warp_accumulate<D>(d_v, p, do_tile(stage), lane);
    // dS^T = P^T (dP^T - D), dP^T = V dO^T.
    RowTile ds;
    device::warp_scores<D>(ds, v_tile, do_tile(stage), warp, lane);
    device::key_row_score_gradient(ds, p, delta, lane);
    device::PackedRowTile ds_a;
    device::pack_fragments(ds_a, ds);
    device::warp_accumulate<D>(d_k, ds_a, q_tile(stage), lane);

    if constexpr (kAtomicDq) {
#pragma unroll
      for (int j = 0; j < T::kTileRows / 8; ++j) {
#pragma unroll
        for (int r = 0; r < 2; ++r) {  // elements 2 r, 2 r + 1: one packed register
          *reinterpret_cast<std::uint32_t*>(
              ds_t_tile + (warp * 16 + layout::c_row(lane, r)) * (T::kTileRows + kRowPad) + 8 * j +
              layout::c_col(lane, 2 * r)) = ds_a[j / 2][layout::a_register_of(j % 2, 2 * r).index];
        }
      }
      __syncthreads();  // dS^T complete
                        // dQ rows 16 warp .. of this query tile = dS K, kBlocksPerPass x 8 columns at a time.
#pragma unroll 1
      for (int first_block = 0; first_block < D / 8; first_block += kBlocksPerPass) {
        float d_q[kBlocksPerPass][4];
        zero_blocks(d_q);
        device::warp_accumulate_tn<D, kBlocksPerPass>(d_q, ds_t_tile, k_tile, first_block, warp, lane);
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const std::int64_t token = q0 + warp * 16 + layout::c_row(lane, r);
          if (token >= shape.q_tokens) continue;
          float* row = out.d_q + (token * shape.heads + head) * D + 8 * first_block + layout::c_col(lane, 2 * r);
#pragma unroll
          for (int j = 0; j < kBlocksPerPass; ++j) {
            atomicAdd(row + 8 * j, scale * d_q[j][2 * r]);
            atomicAdd(row + 8 * j + 1, scale * d_q[j][2 * r + 1]);
          }
        }
      }
    }
  }
  pipe.drain();

  device::add_key_rows<D>(out, d_k, d_v, scale, k0 + warp * 16, lane, shape, kv_head);
}

// Deterministic dQ: one block per (query block, query head) owns its dQ rows.
template <class T>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    flash_backward_dq_kernel(const PairInputs in, const BackwardInputs grad_in, const Gradients out) {
  constexpr int D = T::kHeadDim;
  static_assert(T::kTileRows == device::kScoreCols);
  using Smem = DqSmem<T>;
  extern __shared__ __align__(16) unsigned char smem[];
  auto* q_tile = reinterpret_cast<std::uint16_t*>(smem + Smem::q);
  auto* do_tile = reinterpret_cast<std::uint16_t*>(smem + Smem::d_o);
  auto k_tile = [&](int stage) { return reinterpret_cast<std::uint16_t*>(smem + Smem::k + stage * Smem::kTile); };
  auto v_tile = [&](int stage) { return reinterpret_cast<std::uint16_t*>(smem + Smem::v + stage * Smem::kTile); };
  auto k_positions = [&](int stage) {
    return reinterpret_cast<std::int64_t*>(smem + Smem::k_positions) + stage * T::kTileRows;
  };

  const PairShape& shape = in.shape;
  const device::QueryBlock block(in, T::kRows);
  const std::int64_t head = block.head, q0 = block.q0;
  const device::TilePipeline<T::kStages> pipe{block.first, block.last};
  if (pipe.first == pipe.last) return;

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const float scale = 1.0f / sqrtf(static_cast<float>(D));
  const FastExp exp;
  const device::QueryRowScalars row(in, grad_in, q0 + warp * 16, lane, head);

  auto load = [&](int e, int stage) {
    device::load_key_tile_async<T>(k_tile(stage), v_tile(stage), k_positions(stage), in, block.tiles[e].tile,
                                   block.kv_head);
  };
  device::load_tile_async<D, T::kRows, T::kThreads>(q_tile, in.q, q0, shape.q_tokens, shape.heads, head);
  device::load_tile_async<D, T::kRows, T::kThreads>(do_tile, grad_in.d_o, q0, shape.q_tokens, shape.heads, head);
  pipe.start(load);
  float d_q[D / 8][4];
  zero_blocks<D / 8>(d_q);

  for (int e = pipe.first; e < pipe.last; ++e) {
    const int stage = pipe.advance(e, load);
    const hd::TileRef ref = block.tiles[e];
    const std::int64_t k0 = std::int64_t{ref.tile} * T::kTileRows;
    const std::int64_t* keys = k_positions(stage);

    RowTile p;
    device::warp_scores<D>(p, q_tile, k_tile(stage), warp, lane);
    device::query_row_probabilities(
        p, row.rows, row.lse, [&](int col) { return keys[col]; }, lane, in.mask,
        device::key_tile_masked(ref, k0, T::kTileRows, shape.k_tokens), scale, exp);
    RowTile ds;
    device::warp_scores<D>(ds, do_tile, v_tile(stage), warp, lane);  // dP = dO V^T
    device::query_row_score_gradient(ds, p, row.delta);
    device::PackedRowTile ds_a;
    device::pack_fragments(ds_a, ds);
    device::warp_accumulate<D>(d_q, ds_a, k_tile(stage), lane);
  }
  pipe.drain();

  device::add_query_rows<D>(out.d_q, d_q, scale, q0 + warp * 16, lane, shape, head);
}

template <int D, bool kAtomicDq>
void launch_kv(const PairInputs& in, const BackwardInputs& grad_in, const Gradients& out, cudaStream_t stream) {
  using T = KvTraits<D>;
  const dim3 grid(static_cast<unsigned>(in.tiles.by_key_blocks_of(T::kRows).blocks),
                  static_cast<unsigned>(in.shape.kv_heads));
  launch(flash_backward_kv_kernel<T, kAtomicDq>, grid, dim3(T::kThreads), KvSmem<T, kAtomicDq>::bytes, stream,
         "flash_backward_kv_kernel", in, grad_in, out);
}

template <int D>
void launch_dq(const PairInputs& in, const BackwardInputs& grad_in, const Gradients& out, cudaStream_t stream) {
  using T = DqTraits<D>;
  const dim3 grid(static_cast<unsigned>(in.tiles.by_query.blocks), static_cast<unsigned>(in.shape.heads));
  launch(flash_backward_dq_kernel<T>, grid, dim3(T::kThreads), DqSmem<T>::bytes, stream, "flash_backward_dq_kernel", in,
         grad_in, out);
}

template <int D>
void launch_backward(const PairInputs& in, const BackwardInputs& grad_in, const Gradients& out, bool deterministic,
                     cudaStream_t stream) {
  if constexpr (kAtomicDqPays<D>) {
    if (!deterministic) return launch_kv<D, true>(in, grad_in, out, stream);
  }
  launch_kv<D, false>(in, grad_in, out, stream);
  launch_dq<D>(in, grad_in, out, stream);
}

}  // namespace

void flash_backward_mma_sync(const PairInputs& in, const BackwardInputs& grad_in, const Gradients& out,
                             bool deterministic, cudaStream_t stream) {
  with_head_dim(in.shape.head_dim, [&]<int D>() { launch_backward<D>(in, grad_in, out, deterministic, stream); });
}

KernelPath flash_backward(const PairInputs& in, const BackwardInputs& grad_in, const Gradients& out, bool deterministic,
                          cudaStream_t stream, KernelPathChoice choice) {
  check_backward_inputs(in, grad_in, out);
  const bool aligned = tma_aligned(in.q) && tma_aligned(in.k) && tma_aligned(in.v) && tma_aligned(grad_in.d_o);
  const KernelPath path = choose_path(choice, current_device_arch(), aligned, "flash_backward");
  if (in.shape.q_tokens == 0 || in.shape.k_tokens == 0) return path;
  if (path == KernelPath::Wgmma) {
    flash_backward_wgmma(in, grad_in, out, stream);
  } else {
    flash_backward_mma_sync(in, grad_in, out, deterministic, stream);
  }
  return path;
}

}  // namespace burst::rt::gpu
