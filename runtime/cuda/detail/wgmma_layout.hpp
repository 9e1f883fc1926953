// Where the Hopper path's operands sit: the 128-byte swizzled shared-memory tiles the tensor
// memory accelerator (TMA) writes, the wgmma matrix descriptors that read them, and the
// accumulator fragments wgmma leaves in registers. Plain functions that g++ tests on the CPU
// (tests/kernels_hd/wgmma_layout_test.cpp walks every element of every operand through them)
// and nvcc compiles into the sm_90a kernel (flash_forward_sm90.cu).
//
// Tiles. A tile is `rows` rows of 64 bf16 (128 bytes), the box a TMA load with
// CU_TENSOR_MAP_SWIZZLE_128B writes: row r at byte 128 r, its 16-byte chunk c stored at chunk
// c ^ (r % 8) (the XOR of address bits 4-6 with bits 7-9, so the tile must start 1024-byte
// aligned). A head dim of 128 is two such tiles side by side ("column blocks").
//
// Descriptors (PTX ISA, "Matrix Descriptor Format" of wgmma): a 64-bit word of
//   bits  0-13  start address >> 4          bits 16-29  leading byte offset >> 4
//   bits 32-45  stride byte offset >> 4     bits 62-63  swizzle (1 = 128 bytes)
// over the canonical layouts (CUTLASS's make_gmma_desc states them in 16-byte units T):
//   K-major  ((8, m), 2) : ((8 T, SBO), 1)   8 rows 128 bytes apart, 8-row groups SBO apart,
//                                            the k16 slice 32 contiguous bytes (LBO unused)
//   MN-major ((8 T, n), (8, k)) : ((1, LBO), (8 T, SBO))   64 contiguous elements along M/N,
//                                            the next 64 LBO away; 8 k-rows 128 bytes apart,
//                                            8-row groups SBO apart
// and the swizzle applies to the final address bits, so a k16 slice of a K-major tile starts
// 32 bytes further on, and a k16 slice of an MN-major tile 16 rows (2048 bytes) further on.
//   S = Q K^T   A = Q (K-major, m64 of the block's rows), B = K (K-major, n64 keys): SBO 1024
//   O += P V    A = P in registers, B = V (MN-major: keys are k, head dim is n): SBO 1024,
//               LBO = one column block (rows x 128 bytes)
//
// Accumulators (PTX ISA, "wgmma .m64nNk16 register fragment"): thread T of the warpgroup holds
// N / 2 floats; element i is row 16 (T / 32) + (T % 32) / 4 + 8 ((i / 2) % 2), column
// 8 (i / 4) + 2 (T % 4) + i % 2 - per warp, exactly the mma.sync m16n8 C layout of
// fragment_layout.hpp repeated over N / 8 blocks. A from registers (m64 x k16) is, per warp,
// the mma.sync A layout. So the scores, probabilities and output of the Ampere path's warp
// code (RowTile, PackedRowTile) are the Hopper path's fragments, row block for row block.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "runtime/cuda/detail/fragment_layout.hpp"

namespace burst::rt::gpu::wgmma {

inline constexpr int kSwizzleBytes = 128;                    // a tile row: 64 bf16
inline constexpr int kTileCols = kSwizzleBytes / 2;          // bf16 elements of a tile row
inline constexpr int kSwizzleAtomBytes = 8 * kSwizzleBytes;  // 8 rows: the swizzle's period
inline constexpr int kWarpgroupRows = 64;                    // m of every wgmma

// Byte offset of element (row, col) of a 128-byte swizzled tile of bf16, col < 64.
BURST_HOST_DEVICE constexpr std::uint32_t swizzled_offset(int row, int col) {
  const int chunk = (col * 2) / 16, within = (col * 2) % 16;
  return static_cast<std::uint32_t>(row * kSwizzleBytes + ((chunk ^ (row % 8)) * 16) + within);
}

// Bytes of a tile of `rows` rows (one column block).
BURST_HOST_DEVICE constexpr std::uint32_t tile_bytes(int rows) {
  return static_cast<std::uint32_t>(rows * kSwizzleBytes);
}

enum class Swizzle : std::uint64_t { None = 0, Bytes128 = 1 };

struct Descriptor {
  std::uint32_t start = 0;  // shared-memory byte address
  std::uint32_t leading_bytes = 0;
  std::uint32_t stride_bytes = 0;
  Swizzle swizzle = Swizzle::Bytes128;
};

BURST_HOST_DEVICE constexpr std::uint64_t encode(const Descriptor& d) {
  constexpr std::uint64_t k14 = 0x3FFF;
  return ((std::uint64_t{d.start} >> 4) & k14) | (((std::uint64_t{d.leading_bytes} >> 4) & k14) << 16) |
         (((std::uint64_t{d.stride_bytes} >> 4) & k14) << 32) | (static_cast<std::uint64_t>(d.swizzle) << 62);
}

// The k16 slice kk (columns 16 kk .. 16 kk + 15) of a K-major operand whose rows start at
// `tile` (the first of its column blocks, each `block_bytes` apart), m or n rows from the
// tile's first row.
BURST_HOST_DEVICE constexpr Descriptor k_major(std::uint32_t tile, std::uint32_t block_bytes, int kk) {
  const int block = (kk * 16) / kTileCols, within = (kk * 16) % kTileCols;
  return {tile + static_cast<std::uint32_t>(block) * block_bytes + static_cast<std::uint32_t>(within * 2), 16,
          kSwizzleAtomBytes, Swizzle::Bytes128};
}

// The k16 slice kk (k-rows 16 kk .. 16 kk + 15) of an MN-major operand: tile rows are k, its
// n columns run over the column blocks, `block_bytes` apart.
BURST_HOST_DEVICE constexpr Descriptor mn_major(std::uint32_t tile, std::uint32_t block_bytes, int kk) {
  return {tile + static_cast<std::uint32_t>(kk * 16 * kSwizzleBytes), block_bytes, kSwizzleAtomBytes,
          Swizzle::Bytes128};
}

// What the hardware reads for a descriptor, from the canonical layouts above: the byte address
// of element (m or n index, k index) of a k16 slice. The CPU test checks that these addresses
// hold the elements the TMA stored there.
BURST_HOST_DEVICE constexpr std::uint32_t swizzle_address(std::uint32_t address) {
  return address ^ (((address >> 7) & 7u) << 4);
}
BURST_HOST_DEVICE constexpr std::uint32_t k_major_address(const Descriptor& d, int mn, int k) {
  const std::uint32_t unswizzled = d.start + static_cast<std::uint32_t>(mn / 8) * d.stride_bytes +
                                   static_cast<std::uint32_t>((mn % 8) * kSwizzleBytes + k * 2);
  return swizzle_address(unswizzled);
}
BURST_HOST_DEVICE constexpr std::uint32_t mn_major_address(const Descriptor& d, int mn, int k) {
  const std::uint32_t unswizzled = d.start + static_cast<std::uint32_t>(mn / kTileCols) * d.leading_bytes +
                                   static_cast<std::uint32_t>((mn % kTileCols) * 2) +
                                   static_cast<std::uint32_t>(k / 8) * d.stride_bytes +
                                   static_cast<std::uint32_t>((k % 8) * kSwizzleBytes);
  return swizzle_address(unswizzled);
}

// Row and column of accumulator element i of thread t (0..127) of a warpgroup.
BURST_HOST_DEVICE constexpr layout::Coord accumulator_element(int t, int i) {
  const layout::Coord c = layout::c_element(t % 32, i % 4);
  return {16 * (t / 32) + c.row, 8 * (i / 4) + c.col};
}

}  // namespace burst::rt::gpu::wgmma
