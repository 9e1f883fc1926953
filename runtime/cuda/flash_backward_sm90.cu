// The Hopper backward of one block pair (kernel_path.hpp's wgmma path; built for sm_90a only).
//
// Same contract and arithmetic as the Ampere backward (flash_backward.cu): given the final lse
// and D = rowsum(O * dO),
//   P = exp(S - lse)   dV += P^T dO   dP = dO V^T   dS = P (dP - D)
//   dQ += scale dS K   dK += scale dS^T Q
// in two passes that each own their rows, so every sum runs in a fixed order and the result is
// bitwise repeatable (the deterministic mode, always; no float atomics). The per-element work is
// backward_tiles.cuh's, shared with the Ampere path; the products are wgmma, fed by TMA
// (hopper_traits.hpp, hopper_pipeline.cuh):
//
//   flash_backward_kv_sm90_kernel   one block per (key block of 64, kv head): K and V kept; for
//       each query head of the kv head's group (GQA in place) and each query tile of the block's
//       key-major tile list, the producer warp loads Q and dO by TMA and the tile's query
//       positions, lse and D with ordinary loads into a stage; the consumer warpgroup computes
//         S^T = K Q^T, then P^T
//         dP^T = V dO^T, then dS^T (from P^T's registers, so before dV reads them)
//         dV += P^T dO and dK += dS^T Q     (two groups in flight together)
//       (S^T and dP^T are not in flight together: with dK and dV, 224 registers would not hold
//       them and the mask's work without spilling)
//       and adds dK, dV once, at the end. Two blocks per SM: one block's products run under the
//       other's element work.
//   flash_backward_dq_sm90_kernel   one block per (query block of 128, query head), the
//       forward's shape: Q and dO kept; per key tile S = Q K^T and dP = dO V^T, then P, dS and
//       dQ += dS K; dQ added once, at the end.
#include <cstdint>

#include "runtime/cuda/detail/device/backward_tiles.cuh"
#include "runtime/cuda/detail/device/hopper_pipeline.cuh"
#include "runtime/cuda/detail/device/launch.cuh"
#include "runtime/cuda/detail/device/pair_tiles.cuh"
#include "runtime/cuda/detail/flash_attention.hpp"
#include "runtime/cuda/detail/flash_paths.hpp"
#include "runtime/cuda/detail/hopper_traits.hpp"
#include "runtime/cuda/detail/stage_ring.hpp"
#include "runtime/cuda/detail/tensor_map.hpp"
#include "runtime/kernels/hd/index_math.hpp"

namespace burst::rt::gpu {
namespace {

using device::PackedRowTile;
using device::RowTile;
namespace sm90 = device::sm90;

template <class T>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    flash_backward_kv_sm90_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap do_map,
                                  const __grid_constant__ CUtensorMap k_map, const __grid_constant__ CUtensorMap v_map,
                                  const PairInputs in, const BackwardInputs grad_in, const Gradients out) {
  constexpr int D = T::kHeadDim;
  static_assert(T::kConsumers == 1 && T::kTileRows == device::kScoreCols);
  using Smem = HopperKvSmem<T>;
  using Scalars = HopperKvScalars<T>;
  using Ring = StageRing<T::kStages>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const sm90::BlockShared<Smem, T::kStages> shared(smem_raw);
  unsigned char* smem = shared.smem;
  const sm90::StageBarriers<T::kStages>& bars = shared.bars;
  const std::uint32_t base = shared.base;

  const PairShape& shape = in.shape;
  const device::KeyBlockEntries walk(in, T::kRows);
  if (walk.count == 0) return;  // no query attends these keys: nothing to add (the whole block leaves)
  const std::int64_t kv_head = walk.kv_head, k0 = walk.k0;
  const int entries = walk.entries();

  // "full": the producer warp's 32 lanes (their scalars stored; lane 0 also announces the TMA
  // bytes); "empty": the consumer's threads, each releasing its own reads of the scalars.
  if (threadIdx.x == 0) bars.init(32, 32 * T::kConsumerWarps);
  __syncthreads();

  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (warpgroup == 0) {  // the producer
    sm90::registers_decrease<T::kProducerRegisters>();
    if (threadIdx.x >= 32) return;
    const int lane = static_cast<int>(threadIdx.x);
    if (lane == 0) {
      const CUtensorMap* const kept[2] = {&k_map, &v_map};
      sm90::load_kept<T>(shared, kept, kv_head, k0);
    }
    for (int n = 0; n < entries; ++n) {
      const int s = Ring::stage(n);
      if (Ring::refill(n)) sm90::barrier_wait(&bars.empty[s], Ring::empty_parity(n));
      const std::int64_t head = walk.head(n);
      const std::int64_t q0 = std::int64_t{walk.tile(n).tile} * T::kTileRows;
      unsigned char* scalars = smem + Smem::scalars_at(s);
      for (int r = lane; r < T::kTileRows; r += 32) {  // rows past the pair: P = 0 (lse = -inf), so dS = 0
        const std::int64_t token = q0 + r;
        const bool valid = token < shape.q_tokens;
        reinterpret_cast<std::int64_t*>(scalars + Scalars::positions)[r] = valid ? in.q_positions[token] : 0;
        reinterpret_cast<float*>(scalars + Scalars::lse)[r] =
            valid ? grad_in.lse[token * shape.heads + head] : hd::kNegInf;
        reinterpret_cast<float*>(scalars + Scalars::delta)[r] =
            valid ? grad_in.delta[token * shape.heads + head] : 0.0f;
      }
      if (lane == 0) {
        sm90::barrier_arrive_expect_bytes(&bars.full[s], static_cast<std::uint32_t>(Smem::walked_stage));
        sm90::load_operand<T::kColumnBlocks>(smem + Smem::walked_at(s, 0), Smem::walked_block, q_map, &bars.full[s],
                                             head, q0);
        sm90::load_operand<T::kColumnBlocks>(smem + Smem::walked_at(s, 1), Smem::walked_block, do_map, &bars.full[s],
                                             head, q0);
      } else {
        sm90::barrier_arrive(&bars.full[s]);
      }
    }
    return;
  }

  // The consumer: 64 key rows; warp w owns rows 16 w .., the lane a row pair.
  sm90::registers_increase<T::kConsumerRegisters>();
  const int t = static_cast<int>(threadIdx.x) % 128;
  const int warp = t / 32, lane = t % 32;
  std::int64_t keys[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) keys[r] = sm90::key_position(in, k0 + 16 * warp + layout::c_row(lane, r));
  const bool keys_short = k0 + T::kRows > shape.k_tokens;
  const float scale = 1.0f / sqrtf(static_cast<float>(D));
  const device::FastExp exp;
  const std::uint32_t k_rows = base + Smem::consumer_rows(0, 0);
  const std::uint32_t v_rows = base + Smem::consumer_rows(1, 0);

  float d_k[D / 8][4];
  device::zero_blocks(d_k);
  float d_v[D / 8][4];
  device::zero_blocks(d_v);
  sm90::barrier_wait(bars.kept, 0);
  for (int n = 0; n < entries; ++n) {
    const int s = Ring::stage(n);
    sm90::barrier_wait(&bars.full[s], Ring::full_parity(n));
    const std::uint32_t q_tile = base + Smem::walked_at(s, 0), do_tile = base + Smem::walked_at(s, 1);
    const unsigned char* scalars = smem + Smem::scalars_at(s);
    const auto* queries = reinterpret_cast<const std::int64_t*>(scalars + Scalars::positions);
    const auto* lse = reinterpret_cast<const float*>(scalars + Scalars::lse);
    const auto* delta = reinterpret_cast<const float*>(scalars + Scalars::delta);

    RowTile s_t;
    sm90::issue_product_abt<D>(s_t, k_rows, Smem::kept_block, q_tile, Smem::walked_block);  // S^T = K Q^T
    sm90::wgmma_wait<0>();
    sm90::fence_operand(s_t);
    device::key_row_probabilities(
        s_t, lane, [&](int r) { return keys[r]; }, queries, lse, in.mask,
        walk.tile(n).kind != hd::TileKind::Full || keys_short, scale, exp);
    PackedRowTile p;
    device::pack_fragments(p, s_t);
    // dS^T reads P^T's registers, so dV (whose A operand they are) is issued only after it: ordinary
    // code may not access a wgmma's A registers before the wait_group that completes it (PTX ISA,
    // wgmma.wait_group), reads included.
    RowTile dp_t;
    sm90::issue_product_abt<D>(dp_t, v_rows, Smem::kept_block, do_tile, Smem::walked_block);  // dP^T = V dO^T
    sm90::wgmma_wait<0>();
    sm90::fence_operand(dp_t);
    device::key_row_score_gradient(dp_t, p, delta, lane);
    PackedRowTile ds;
    device::pack_fragments(ds, dp_t);
    sm90::issue_product_pb<D>(d_v, p, do_tile, Smem::walked_block);  // dV += P^T dO
    sm90::issue_product_pb<D>(d_k, ds, q_tile, Smem::walked_block);  // dK += dS^T Q
    sm90::wgmma_wait<0>();
    sm90::fence_operand(d_v);
    sm90::fence_operand(d_k);
    sm90::fence_operand(p);
    sm90::fence_operand(ds);
    bars.release_each(s);
  }
  device::add_key_rows<D>(out, d_k, d_v, scale, k0 + 16 * warp, lane, shape, kv_head);
}

template <class T>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    flash_backward_dq_sm90_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap do_map,
                                  const __grid_constant__ CUtensorMap k_map, const __grid_constant__ CUtensorMap v_map,
                                  const PairInputs in, const BackwardInputs grad_in, const Gradients out) {
  constexpr int D = T::kHeadDim;
  static_assert(T::kTileRows == device::kScoreCols);
  using Smem = HopperDqSmem<T>;
  using Ring = StageRing<T::kStages>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const sm90::BlockShared<Smem, T::kStages> shared(smem_raw);
  unsigned char* smem = shared.smem;
  const sm90::StageBarriers<T::kStages>& bars = shared.bars;
  const std::uint32_t base = shared.base;

  const PairShape& shape = in.shape;
  const device::QueryBlock block(in, T::kRows);
  const std::int64_t head = block.head, q0 = block.q0;
  const int first = block.first, last = block.last;
  if (first == last) return;  // these queries attend no key: dQ gets nothing (the whole block leaves)

  if (threadIdx.x == 0) bars.init(1, T::kConsumerWarps);
  __syncthreads();

  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (warpgroup == 0) {  // the producer
    sm90::registers_decrease<T::kProducerRegisters>();
    if (threadIdx.x != 0) return;
    const CUtensorMap* const kept[2] = {&q_map, &do_map};
    sm90::produce_query_block<T>(shared, kept, k_map, v_map, block);
    return;
  }

  // A consumer: 64 query rows; warp w owns 16 of them, the lane a row pair.
  sm90::registers_increase<T::kConsumerRegisters>();
  const int consumer = warpgroup - 1;
  const int t = static_cast<int>(threadIdx.x) % 128;
  const int lane = t % 32;
  const int row0 = 64 * consumer + 16 * (t / 32);  // the warp's first row in the block
  const device::QueryRowScalars row(in, grad_in, q0 + row0, lane, head);
  const std::uint32_t q_rows = base + Smem::consumer_rows(0, consumer);
  const std::uint32_t do_rows = base + Smem::consumer_rows(1, consumer);
  const float scale = 1.0f / sqrtf(static_cast<float>(D));
  const device::FastExp exp;

  float d_q[D / 8][4];
  device::zero_blocks(d_q);
  sm90::barrier_wait(bars.kept, 0);
  for (int n = 0; first + n < last; ++n) {
    const int s = Ring::stage(n);
    sm90::barrier_wait(&bars.full[s], Ring::full_parity(n));
    const std::uint32_t k_tile = base + Smem::walked_at(s, 0), v_tile = base + Smem::walked_at(s, 1);
    const hd::TileRef ref = block.tiles[first + n];
    const std::int64_t k0 = std::int64_t{ref.tile} * T::kTileRows;

    RowTile p, ds;
    sm90::issue_product_abt<D>(p, q_rows, Smem::kept_block, k_tile, Smem::walked_block);    // S = Q K^T
    sm90::issue_product_abt<D>(ds, do_rows, Smem::kept_block, v_tile, Smem::walked_block);  // dP = dO V^T
    sm90::wgmma_wait<1>();
    sm90::fence_operand(p);
    device::query_row_probabilities(
        p, row.rows, row.lse, [&](int col) { return sm90::key_position(in, k0 + col); }, lane, in.mask,
        device::key_tile_masked(ref, k0, T::kTileRows, shape.k_tokens), scale, exp);
    sm90::wgmma_wait<0>();
    sm90::fence_operand(ds);
    device::query_row_score_gradient(ds, p, row.delta);
    PackedRowTile ds_a;
    device::pack_fragments(ds_a, ds);
    sm90::issue_product_pb<D>(d_q, ds_a, k_tile, Smem::walked_block);  // dQ += dS K
    sm90::wgmma_wait<0>();
    sm90::fence_operand(d_q);
    sm90::fence_operand(ds_a);
    bars.release(s, lane);
  }
  device::add_query_rows<D>(out.d_q, d_q, scale, q0 + row0, lane, shape, head);
}

template <int D>
void launch_backward_sm90(const PairInputs& in, const BackwardInputs& grad_in, const Gradients& out,
                          cudaStream_t stream) {
  const PairShape& shape = in.shape;
  auto queries = [&](const Bf16* x, int rows, const char* what) {
    return bf16_token_map(x, shape.q_tokens, shape.heads, D, rows, what);
  };
  auto keys = [&](const Bf16* x, int rows, const char* what) {
    return bf16_token_map(x, shape.k_tokens, shape.kv_heads, D, rows, what);
  };
  using K = HopperKvTraits<D>;
  using Q = HopperDqTraits<D>;
  // The blocks and tiles of the two tile lists (flash_attention.hpp's DeviceTileList).
  static_assert(K::kRows == kKeyBlockRows && K::kTileRows == kQueryTileRows);
  static_assert(Q::kRows == kQueryBlockRows && Q::kTileRows == kKeyTileRows);
  const dim3 kv_grid(static_cast<unsigned>(in.tiles.by_key.blocks), static_cast<unsigned>(shape.kv_heads));
  launch(flash_backward_kv_sm90_kernel<K>, kv_grid, dim3(K::kThreads), HopperKvSmem<K>::bytes, stream,
         "flash_backward_kv_sm90_kernel", queries(in.q, K::kTileRows, "q"), queries(grad_in.d_o, K::kTileRows, "d_o"),
         keys(in.k, K::kRows, "k"), keys(in.v, K::kRows, "v"), in, grad_in, out);
  const dim3 dq_grid(static_cast<unsigned>(in.tiles.by_query.blocks), static_cast<unsigned>(shape.heads));
  launch(flash_backward_dq_sm90_kernel<Q>, dq_grid, dim3(Q::kThreads), HopperDqSmem<Q>::bytes, stream,
         "flash_backward_dq_sm90_kernel", queries(in.q, Q::kRows, "q"), queries(grad_in.d_o, Q::kRows, "d_o"),
         keys(in.k, Q::kTileRows, "k"), keys(in.v, Q::kTileRows, "v"), in, grad_in, out);
}

}  // namespace

void flash_backward_wgmma(const PairInputs& in, const BackwardInputs& grad_in, const Gradients& out,
                          cudaStream_t stream) {
  with_head_dim(in.shape.head_dim, [&]<int D>() { launch_backward_sm90<D>(in, grad_in, out, stream); });
}

}  // namespace burst::rt::gpu
