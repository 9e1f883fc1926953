// Kernel traits of the Hopper attention kernels (kernel_path.hpp's wgmma path, built for sm_90a):
// each kernel's shape as one type, read by the kernels (nvcc), their launchers, the resource
// check and the CPU tests (g++), like kernel_traits.hpp for the Ampere path.
//
// Every Hopper kernel is warp-specialised the same way. A block owns kRows rows of one side
// ("kept" operands, loaded once: Q for the forward; Q and dO for the dQ pass; K and V for the
// dK, dV pass) and walks tiles of kTileRows rows of the other side from a tile list ("walked"
// operands, two per tile: K and V; or Q and dO), through kStages shared-memory stages:
//   warpgroup 0       the producer: TMA loads of the kept operands, then of each walked tile
//                     into stage n % kStages once that stage is released (stage_ring.hpp)
//   warpgroups 1..    kConsumers consumers of 64 rows each (the m of every wgmma), computing
// The launch gives every thread 65536 / (kThreads x kMinBlocks) registers; setmaxnreg then
// moves them from the producer (kProducerRegisters) to the consumers (kConsumerRegisters), whose
// accumulators need them: the static_assert below is that bargain. Operand tiles are 128-byte
// swizzled column blocks of 64 head-dim elements (wgmma_layout.hpp), each 1024-byte aligned.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/host_device.hpp"
#include "runtime/cuda/detail/kernel_traits.hpp"
#include "runtime/cuda/detail/wgmma_layout.hpp"

namespace burst::rt::gpu {

// Registers one multiprocessor holds, and what setmaxnreg accepts (multiples of 8, 24 to 256).
inline constexpr int kRegistersPerSm = 65536;

template <int D, int kRowsN, int kTileRowsN, int kStagesN, int kMinBlocksN, int kProducerRegistersN,
          int kConsumerRegistersN>
struct HopperKernelTraits {
  static_assert(D % wgmma::kTileCols == 0 && kRowsN % wgmma::kWarpgroupRows == 0 && kStagesN >= 2);
  static constexpr int kHeadDim = D;
  static constexpr int kRows = kRowsN;
  static constexpr int kTileRows = kTileRowsN;
  static constexpr int kConsumers = kRows / wgmma::kWarpgroupRows;  // warpgroups of 64 rows
  static constexpr int kConsumerWarps = 4 * kConsumers;
  static constexpr int kThreads = 128 * (kConsumers + 1);
  static constexpr int kStages = kStagesN;
  static constexpr int kMinBlocks = kMinBlocksN;
  static constexpr int kColumnBlocks = D / wgmma::kTileCols;
  static constexpr int kProducerRegisters = kProducerRegistersN;
  static constexpr int kConsumerRegisters = kConsumerRegistersN;
  static_assert(kProducerRegisters % 8 == 0 && kConsumerRegisters % 8 == 0 && kProducerRegisters >= 24 &&
                kConsumerRegisters <= 256);
  // The rebalanced registers fit the block's share of the multiprocessor, rounded down to 8 a thread.
  static constexpr int kLaunchRegisters = kRegistersPerSm / (kThreads * kMinBlocks) / 8 * 8;
  static_assert(128 * (kProducerRegisters + kConsumers * kConsumerRegisters) <= kThreads * kLaunchRegisters);
};

// The forward: 128 query rows (two consumers), key tiles of 64, three stages, one block per SM;
// 168 registers a thread at launch, 40 for the producer and 232 for each consumer thread (its
// output accumulator, scores and probabilities).
template <int D>
struct HopperForwardTraits : HopperKernelTraits<D, kQueryBlockRows, kKeyTileRows, 3, 1, 40, 232> {};
// The dQ pass (the deterministic second pass of the backward): the forward's shape, its
// consumers holding dQ, S and dP.
template <int D>
struct HopperDqTraits : HopperKernelTraits<D, kQueryBlockRows, kKeyTileRows, 3, 1, 40, 232> {};
// The dK, dV pass: 64 key rows (one consumer holding dK, dV, S^T and dP^T), query tiles of 64,
// two stages; two blocks per SM, so one block's products overlap the other's element work. 128
// registers a thread at launch: 32 for the producer (its warp also copies the query rows'
// scalars; at 24 it spills), 224 for the consumer.
template <int D>
struct HopperKvTraits : HopperKernelTraits<D, kKeyBlockRows, kQueryTileRows, 2, 2, 32, 224> {};

// Shared memory of a Hopper kernel: kKept kept operands of kRows rows, then per stage the two
// walked operands of kTileRows rows, then per stage kStageScalarBytes of the walked rows'
// scalars, then the mbarriers: "kept" (the kept operands landed), per stage "full" (the stage's
// loads landed) and "empty" (every consumer warp is done with it). 1 KiB more than the layout,
// to align it.
template <class T, int kKept, std::size_t kStageScalarBytes>
struct HopperSmem {
  static constexpr std::size_t kAlign = wgmma::kSwizzleAtomBytes;
  static constexpr std::size_t kept_block = wgmma::tile_bytes(T::kRows);  // one column block of a kept operand
  static constexpr std::size_t walked_block = wgmma::tile_bytes(T::kTileRows);
  static constexpr std::size_t kept_operand = T::kColumnBlocks * kept_block;
  static constexpr std::size_t walked_operand = T::kColumnBlocks * walked_block;
  static constexpr std::size_t walked_stage = 2 * walked_operand;
  static constexpr std::size_t kept = 0;                       // + operand * kept_operand + block * kept_block
  static constexpr std::size_t walked = kKept * kept_operand;  // + stage * walked_stage + operand * walked_operand
  static constexpr std::size_t scalars = walked + T::kStages * walked_stage;  // + stage * kStageScalarBytes
  static constexpr std::size_t barriers = scalars + T::kStages * kStageScalarBytes;
  static constexpr std::size_t bytes = barriers + (1 + 2 * T::kStages) * sizeof(std::uint64_t) + kAlign;
  static_assert(kept_block % kAlign == 0 && walked_block % kAlign == 0 && kStageScalarBytes % 8 == 0);

  // Where the kernels' operands start (the first column block), from the plan's start.
  BURST_HOST_DEVICE static constexpr std::uint32_t kept_at(int operand) {
    return static_cast<std::uint32_t>(kept + static_cast<std::size_t>(operand) * kept_operand);
  }
  // Consumer c's 64 rows of a kept operand (its A operand: each column block's rows 64 c ..).
  BURST_HOST_DEVICE static constexpr std::uint32_t consumer_rows(int operand, int consumer) {
    return kept_at(operand) + static_cast<std::uint32_t>(consumer * wgmma::kWarpgroupRows * wgmma::kSwizzleBytes);
  }
  BURST_HOST_DEVICE static constexpr std::uint32_t walked_at(int stage, int operand) {
    return static_cast<std::uint32_t>(walked + static_cast<std::size_t>(stage) * walked_stage +
                                      static_cast<std::size_t>(operand) * walked_operand);
  }
  BURST_HOST_DEVICE static constexpr std::size_t scalars_at(int stage) {
    return scalars + static_cast<std::size_t>(stage) * kStageScalarBytes;
  }
};

// The walked rows' scalars of the dK, dV pass, per stage: the query positions (int64), then lse
// and D (fp32), kTileRows each.
template <class T>
struct HopperKvScalars {
  static constexpr std::size_t positions = 0;
  static constexpr std::size_t lse = positions + T::kTileRows * sizeof(std::int64_t);
  static constexpr std::size_t delta = lse + T::kTileRows * sizeof(float);
  static constexpr std::size_t bytes = delta + T::kTileRows * sizeof(float);
};

template <class T>
using HopperForwardSmem = HopperSmem<T, 1, 0>;  // Q; K, V
template <class T>
using HopperDqSmem = HopperSmem<T, 2, 0>;  // Q, dO; K, V
template <class T>
using HopperKvSmem = HopperSmem<T, 2, HopperKvScalars<T>::bytes>;  // K, V; Q, dO and the query rows' scalars

// A Hopper multiprocessor's shared memory (228 KiB, of which one block may take 227), less 1 KiB
// the runtime reserves per block: the kernels' plans fit their resident blocks.
inline constexpr std::size_t kSharedBytesPerSm90 = std::size_t{228} * 1024;
inline constexpr std::size_t kReservedSharedPerBlock = 1024;
template <class T, class Smem>
inline constexpr bool kFitsSm90 = T::kMinBlocks*(Smem::bytes + kReservedSharedPerBlock) <= kSharedBytesPerSm90;
static_assert(kFitsSm90<HopperForwardTraits<128>, HopperForwardSmem<HopperForwardTraits<128>>>);
static_assert(kFitsSm90<HopperDqTraits<128>, HopperDqSmem<HopperDqTraits<128>>>);
static_assert(kFitsSm90<HopperKvTraits<128>, HopperKvSmem<HopperKvTraits<128>>>);

}  // namespace burst::rt::gpu
