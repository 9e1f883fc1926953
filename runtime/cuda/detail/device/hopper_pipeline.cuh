// The pieces every Hopper attention kernel is made of (device only, sm_90a; hopper_traits.hpp
// for the shapes): the shared-memory plan's barriers, the producer's TMA loads of an operand,
// and the consumers' two products over a warpgroup's 64 rows, each issued as one wgmma group.
//
//   StageBarriers       "kept", full[kStages], empty[kStages] at the end of a HopperSmem, and a
//                       consumer warp's (or thread's) release of a stage
//   BlockShared         a kernel's shared memory: the plan's aligned start, its barriers, and
//                       its shared-space address (what descriptors and TMA take)
//   load_operand        one operand's rows [row0, row0 + box) of one head, all its column blocks
//   load_kept           the block's kept operands, on the "kept" barrier
//   produce_query_block the producer of a query-major walk (forward, dQ pass): the block's kept
//                       operands, then each key tile's K and V into its stage
//   issue_product_abt   acc[64 x 64]  = A B^T over the head dim (A, B K-major tiles in shared
//                       memory: S = Q K^T, S^T = K Q^T, dP = dO V^T, dP^T = V dO^T)
//   key_position        a key's global position, read from global memory where a Partial
//                       tile's mask needs it (few, and cached)
//   issue_product_pb    acc[64 x D]  += P B (P the warpgroup's packed 64 x 64 fragments in
//                       registers, B 64 rows x D read MN-major: O += P V, dV += P^T dO,
//                       dK += dS^T Q, dQ += dS K)
// A consumer fences an accumulator and a register operand P before it issues (fence_operand:
// ordinary code is done with them before the wgmma.fence), and fences them again after the
// wait_group that completes the group.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda.h>

#include "runtime/cuda/detail/device/hopper.cuh"
#include "runtime/cuda/detail/device/pair_tiles.cuh"
#include "runtime/cuda/detail/device/warp_tiles.cuh"
#include "runtime/cuda/detail/flash_attention.hpp"
#include "runtime/cuda/detail/stage_ring.hpp"
#include "runtime/cuda/detail/wgmma_layout.hpp"

namespace burst::rt::gpu::device::sm90 {

template <int kStages>
struct StageBarriers {
  std::uint64_t* kept;
  std::uint64_t* full;
  std::uint64_t* empty;
  __device__ explicit StageBarriers(unsigned char* at)
      : kept(reinterpret_cast<std::uint64_t*>(at)), full(kept + 1), empty(kept + 1 + kStages) {}
  // By one thread, before a __syncthreads: a phase of "kept" and of each "full" completes with
  // `full_arrivals` arrivals and the bytes they announce; of each "empty" with `empty_arrivals`.
  __device__ void init(std::uint32_t full_arrivals, std::uint32_t empty_arrivals) const {
    barrier_init(kept, 1);
    for (int s = 0; s < kStages; ++s) {
      barrier_init(&full[s], full_arrivals);
      barrier_init(&empty[s], empty_arrivals);
    }
    barrier_init_fence();
  }
  // A consumer warp is done with `stage`: one arrival per warp (its reads of the stage are wgmma's
  // and the warp's own, ordered by the __syncwarp).
  __device__ void release(int stage, int lane) const {
    __syncwarp();
    if (lane == 0) barrier_arrive(&empty[stage]);
  }
  // A consumer thread is done with `stage`: one arrival per thread, where the producer refills the
  // stage with ordinary stores (the dK, dV pass's per-row scalars). mbarrier.arrive releases the
  // arriving thread's own accesses (PTX ISA, memory consistency model), so every thread that read
  // the stage arrives; compute-sanitizer's racecheck reported the one-arrival-per-warp release
  // there as write-after-read hazards on an H200.
  __device__ void release_each(int stage) const { barrier_arrive(&empty[stage]); }
};

template <class Smem, int kStages>
struct BlockShared {
  unsigned char* smem;
  StageBarriers<kStages> bars;
  std::uint32_t base;
  __device__ explicit BlockShared(unsigned char* raw)
      : smem(raw + ((Smem::kAlign - shared_address(raw) % Smem::kAlign) % Smem::kAlign)),
        bars(smem + Smem::barriers),
        base(shared_address(smem)) {}
};

template <int kColumnBlocks>
__device__ inline void load_operand(unsigned char* dst, std::size_t block_bytes, const CUtensorMap& map,
                                    std::uint64_t* bar, std::int64_t head, std::int64_t row0) {
#pragma unroll
  for (int cb = 0; cb < kColumnBlocks; ++cb) {
    tma_load_3d(dst + cb * block_bytes, &map, bar, cb * wgmma::kTileCols, static_cast<int>(head),
                static_cast<int>(row0));
  }
}

// One thread: the block's kept operands (`kept`: Q; Q and dO; K and V), rows row0 .. of `head`,
// announced to and reported on the "kept" barrier.
template <class T, class Smem, int kKept>
__device__ inline void load_kept(const BlockShared<Smem, T::kStages>& shared, const CUtensorMap* const (&kept)[kKept],
                                 std::int64_t head, std::int64_t row0) {
  std::uint64_t* bar = shared.bars.kept;
  barrier_arrive_expect_bytes(bar, static_cast<std::uint32_t>(kKept * Smem::kept_operand));
  for (int i = 0; i < kKept; ++i) {
    load_operand<T::kColumnBlocks>(shared.smem + Smem::kept_at(i), Smem::kept_block, *kept[i], bar, head, row0);
  }
}

// One thread: the kept operands (`kept`: Q; or Q and dO) of the block's query rows, then each key
// tile of its walk into stage n % kStages, once the consumers have released that stage's
// previous tile (stage_ring.hpp).
template <class T, class Smem, int kKept>
__device__ inline void produce_query_block(const BlockShared<Smem, T::kStages>& shared,
                                           const CUtensorMap* const (&kept)[kKept], const CUtensorMap& k_map,
                                           const CUtensorMap& v_map, const QueryBlock& block) {
  using Ring = StageRing<T::kStages>;
  unsigned char* smem = shared.smem;
  const StageBarriers<T::kStages>& bars = shared.bars;
  const std::int64_t kv_head = block.kv_head;
  load_kept<T>(shared, kept, block.head, block.q0);
  for (int n = 0; block.first + n < block.last; ++n) {
    const int s = Ring::stage(n);
    if (Ring::refill(n)) barrier_wait(&bars.empty[s], Ring::empty_parity(n));
    const std::int64_t k0 = std::int64_t{block.tiles[block.first + n].tile} * T::kTileRows;
    barrier_arrive_expect_bytes(&bars.full[s], static_cast<std::uint32_t>(Smem::walked_stage));
    load_operand<T::kColumnBlocks>(smem + Smem::walked_at(s, 0), Smem::walked_block, k_map, &bars.full[s], kv_head, k0);
    load_operand<T::kColumnBlocks>(smem + Smem::walked_at(s, 1), Smem::walked_block, v_map, &bars.full[s], kv_head, k0);
  }
}

// -1 past the pair's end: a key no interval contains.
__device__ inline std::int64_t key_position(const PairInputs& in, std::int64_t key) {
  return key < in.shape.k_tokens ? in.k_positions[key] : std::int64_t{-1};
}

template <int D>
__device__ inline void issue_product_abt(RowTile& acc, std::uint32_t a, std::uint32_t a_block, std::uint32_t b,
                                         std::uint32_t b_block) {
  fence_operand(acc);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    wgmma_64x64_ss(acc, wgmma::encode(wgmma::k_major(a, a_block, kk)), wgmma::encode(wgmma::k_major(b, b_block, kk)),
                   kk > 0);
  }
  wgmma_commit();
}

template <int D>
__device__ inline void issue_product_pb(float (&acc)[D / 8][4], PackedRowTile& p, std::uint32_t b,
                                        std::uint32_t b_block) {
  fence_operand(acc);
  fence_operand(p);  // the ordinary code that wrote P (its packing) stays before the wgmma.fence
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kScoreCols / 16; ++kk) {
#pragma unroll
    for (int cb = 0; cb < D / wgmma::kTileCols; ++cb) {
      auto& columns = *reinterpret_cast<float(*)[8][4]>(&acc[8 * cb]);
      wgmma_64x64_rs_mn(columns, p[kk], wgmma::encode(wgmma::mn_major(b + cb * b_block, b_block, kk)));
    }
  }
  wgmma_commit();
}

}  // namespace burst::rt::gpu::device::sm90
