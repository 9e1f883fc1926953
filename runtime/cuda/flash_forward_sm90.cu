// The Hopper forward of one block pair (kernel_path.hpp's wgmma path; built for sm_90a only).
//
// Same contract, tile list and per-row arithmetic as the Ampere forward (flash_forward.cu):
// one block per (query block of 128 rows, query head) walking its key tiles of 64 from the
// query-major tile list, Partial tiles masked element by element, online softmax in fp32, GQA
// reading kv head h / (heads / kv_heads) in place, O = 0 and lse = -inf for a row with no key.
// What differs is how the products are fed (HopperForwardTraits, wgmma_layout.hpp):
//
//   warpgroup 0 (producer)   one thread: Q once, then for each key tile K and V by TMA into
//                            stage n % kStages, after waiting for the stage's "empty" barrier;
//                            the loads complete the stage's "full" barrier with their bytes
//   warpgroups 1, 2          64 query rows each; per key tile n:
//   (consumers)                issue S_n = Q K_n^T              (wgmma, both from shared memory)
//                              issue O += P_{n-1} V_{n-1}      (wgmma, P from registers)
//                              wait for S_n; mask, softmax of S_n while P V still runs
//                              wait for P V; release stage n - 1; O *= alpha_n; P_n = bf16(S_n)
//
// so the softmax of one tile overlaps the products of the next (FlashAttention-3's
// intra-warpgroup pipelining), and loads run kStages - 2 tiles ahead of the products. The key
// positions a Partial tile's mask needs are read from global memory (they are few and cached);
// the query rows' positions and allowed intervals sit in each thread's registers.
#include <cstdint>

#include "runtime/cuda/detail/device/hopper_pipeline.cuh"
#include "runtime/cuda/detail/device/launch.cuh"
#include "runtime/cuda/detail/device/row_softmax.cuh"
#include "runtime/cuda/detail/flash_attention.hpp"
#include "runtime/cuda/detail/flash_paths.hpp"
#include "runtime/cuda/detail/hopper_traits.hpp"
#include "runtime/cuda/detail/stage_ring.hpp"
#include "runtime/cuda/detail/tensor_map.hpp"
#include "runtime/cuda/detail/wgmma_layout.hpp"
#include "runtime/kernels/hd/index_math.hpp"

namespace burst::rt::gpu {
namespace {

using device::PackedRowTile;
using device::RowTile;
namespace sm90 = device::sm90;

template <class T>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    flash_forward_sm90_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
                              const __grid_constant__ CUtensorMap v_map, const PairInputs in, float* __restrict__ o,
                              float* __restrict__ lse) {
  constexpr int D = T::kHeadDim;
  using Smem = HopperForwardSmem<T>;
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

  if (threadIdx.x == 0) bars.init(1, T::kConsumerWarps);
  __syncthreads();

  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (warpgroup == 0) {  // the producer
    sm90::registers_decrease<T::kProducerRegisters>();
    if (threadIdx.x != 0 || first == last) return;
    const CUtensorMap* const kept[1] = {&q_map};
    sm90::produce_query_block<T>(shared, kept, k_map, v_map, block);
    return;
  }

  // A consumer: 64 query rows; this thread's warp owns 16 of them, the lane a row pair.
  sm90::registers_increase<T::kConsumerRegisters>();
  const int consumer = warpgroup - 1;
  const int t = static_cast<int>(threadIdx.x) % 128;
  const int lane = t % 32;
  const int row0 = 64 * consumer + 16 * (t / 32);  // the warp's first row in the block
  device::QueryRow rows[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const std::int64_t token = q0 + row0 + layout::c_row(lane, r);
    if (token < shape.q_tokens) {
      rows[r].position = in.q_positions[token];
      rows[r].allowed = hd::allowed_keys(in.mask, rows[r].position);
    }
  }
  const std::uint32_t q_rows = base + Smem::consumer_rows(0, consumer);
  const float scale = 1.0f / sqrtf(static_cast<float>(D));
  const device::FastExp exp;

  float acc[D / 8][4];
  device::zero_blocks(acc);
  float row_max[2] = {hd::kNegInf, hd::kNegInf}, row_sum[2] = {0.0f, 0.0f};
  RowTile s;
  PackedRowTile p;

  auto issue_scores = [&](int n) {
    sm90::issue_product_abt<D>(s, q_rows, Smem::kept_block, base + Smem::walked_at(Ring::stage(n), 0),
                               Smem::walked_block);
  };
  auto issue_values = [&](int n) {
    sm90::issue_product_pb<D>(acc, p, base + Smem::walked_at(Ring::stage(n), 1), Smem::walked_block);
  };
  // Masks and normalises S_n (landed), returning each row pair's alpha.
  auto softmax = [&](int n, float(&alpha)[2]) {
    const std::int64_t k0 = std::int64_t{block.tiles[first + n].tile} * T::kTileRows;
    const bool masked = device::key_tile_masked(block.tiles[first + n], k0, T::kTileRows, shape.k_tokens);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      if (masked) {
        device::mask_row_pair(s, r, lane, rows[r], in.mask, [&](int col) { return sm90::key_position(in, k0 + col); });
      }
      alpha[r] = device::softmax_row_pair(s, r, scale, row_max[r], row_sum[r], exp);
    }
  };

  if (first < last) {
    sm90::barrier_wait(bars.kept, 0);
    sm90::barrier_wait(&bars.full[Ring::stage(0)], Ring::full_parity(0));
    issue_scores(0);
    sm90::wgmma_wait<0>();
    sm90::fence_operand(s);
    float alpha[2];
    softmax(0, alpha);
    device::pack_fragments(p, s);
    for (int n = 1; first + n < last; ++n) {
      sm90::barrier_wait(&bars.full[Ring::stage(n)], Ring::full_parity(n));
      issue_scores(n);
      issue_values(n - 1);
      sm90::wgmma_wait<1>();
      sm90::fence_operand(s);
      softmax(n, alpha);
      sm90::wgmma_wait<0>();
      sm90::fence_operand(acc);
      sm90::fence_operand(p);  // P V has read P: it may be overwritten now
      bars.release(Ring::stage(n - 1), lane);
#pragma unroll
      for (int r = 0; r < 2; ++r) device::rescale_row_pair(acc, r, alpha[r]);
      device::pack_fragments(p, s);
    }
    issue_values(last - first - 1);
    sm90::wgmma_wait<0>();
    sm90::fence_operand(acc);
  }

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const hd::RowEnd end = device::end_row_pair(row_max[r], row_sum[r]);  // every lane: it shuffles
    const std::int64_t token = q0 + row0 + layout::c_row(lane, r);
    if (token < shape.q_tokens) device::store_row_pair<D>(o, lse, acc, r, lane, end, token, shape.heads, head);
  }
}

template <int D>
void launch_forward_sm90(const PairInputs& in, float* o, float* lse, cudaStream_t stream) {
  using T = HopperForwardTraits<D>;
  const PairShape& shape = in.shape;
  const CUtensorMap q_map = bf16_token_map(in.q, shape.q_tokens, shape.heads, D, T::kRows, "q");
  // No keys: no tile is walked and K, V (which may be null then) are never read; the maps still
  // need an address.
  const bool keys = shape.k_tokens > 0;
  const CUtensorMap k_map = bf16_token_map(keys ? in.k : in.q, shape.k_tokens, shape.kv_heads, D, T::kTileRows, "k");
  const CUtensorMap v_map = bf16_token_map(keys ? in.v : in.q, shape.k_tokens, shape.kv_heads, D, T::kTileRows, "v");
  const dim3 grid(static_cast<unsigned>(in.tiles.by_query.blocks), static_cast<unsigned>(shape.heads));
  launch(flash_forward_sm90_kernel<T>, grid, dim3(T::kThreads), HopperForwardSmem<T>::bytes, stream,
         "flash_forward_sm90_kernel", q_map, k_map, v_map, in, o, lse);
}

}  // namespace

void flash_forward_wgmma(const PairInputs& in, float* o, float* lse, cudaStream_t stream) {
  with_head_dim(in.shape.head_dim, [&]<int D>() { launch_forward_sm90<D>(in, o, lse, stream); });
}

}  // namespace burst::rt::gpu
