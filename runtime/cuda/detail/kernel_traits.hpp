// Kernel traits of the CUDA attention kernels: each kernel family's shape as one type, in a
// header that the kernels (nvcc), their launchers, the tile lists and the resource check (g++,
// tests/gpu/) all read, so a tile size, a warp count or the bytes a launcher requests are written
// once.
//
// A family's block owns kRows rows of one side (query rows for the forward and the dQ pass, key
// rows for the dK, dV pass), 16 per warp (one mma row block), and walks the tiles of the other
// side, kTileRows rows each, from a tile list. The walked tiles flow through kStages
// shared-memory stages (device/tile_pipeline.cuh): while a block computes with the tile in one
// stage, cp.async fills the next, so loads overlap the matrix products. kMinBlocks is the
// resident blocks per multiprocessor the kernel is compiled for (__launch_bounds__) and gated on
// (tests/gpu/kernel_resources.sh): its registers and shared memory must allow that many.
//
// Shared memory: a bf16 tile row of d elements is stored d + 8 elements apart; the 16-byte pad
// shifts consecutive rows by 4 banks, so the 8 row addresses of an ldmatrix phase hit 8 distinct
// 16-byte bank groups (no conflicts) without an address swizzle. Tiles come first (16-byte
// aligned for cp.async and ldmatrix), then int64 position arrays, then fp32 per-row scalars.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace burst::rt::gpu {

inline constexpr int kWarpRows = 16;  // rows a warp owns: one m16n8k16 row block
inline constexpr int kRowPad = 8;     // bf16 elements of padding per shared-memory tile row

// Largest dynamic shared memory a block may use on sm_80 (A100: 163 KiB); sm_90 allows more.
inline constexpr std::size_t kMaxSharedBytesSm80 = std::size_t{163} * 1024;

template <int D, int kRowsN, int kTileRowsN, int kStagesN, int kMinBlocksN, int kWarpBlocksN = 1>
struct KernelTraits {
  static_assert(D % 16 == 0 && kRowsN % (kWarpRows * kWarpBlocksN) == 0 && kTileRowsN % 16 == 0 && kStagesN >= 2);
  static constexpr int kHeadDim = D;
  static constexpr int kRows = kRowsN;              // rows the block owns
  static constexpr int kTileRows = kTileRowsN;      // rows of each walked tile
  static constexpr int kWarpBlocks = kWarpBlocksN;  // 16-row mma blocks a warp owns
  static constexpr int kWarps = kRows / (kWarpRows * kWarpBlocks);
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kStages = kStagesN;
  static constexpr int kMinBlocks = kMinBlocksN;
  static constexpr int kStride = D + kRowPad;  // bf16 elements between shared tile rows
};

// The tile lists the kernels walk (flash_attention.hpp's DeviceTileList):
//   query-major  blocks of kQueryBlockRows queries, each walking key tiles of kKeyTileRows
//                (the forward and the dQ pass: 128 query rows share each key
//                tile's loads, as FlashAttention-2's forward does)
//   key-major    blocks of kKeyBlockRows keys, each walking query tiles of kQueryTileRows
//                (the dK, dV passes), and the same over blocks of kWideKeyBlockRows keys (the
//                mma.sync dK, dV pass at head dim 128: kv_block_rows)
inline constexpr int kQueryBlockRows = 128;
inline constexpr int kKeyTileRows = 64;
inline constexpr int kKeyBlockRows = 64;
inline constexpr int kWideKeyBlockRows = 128;
inline constexpr int kQueryTileRows = 64;

// 128 query rows. Head dim 64: 4 warps of 32 rows each (two mma row blocks: every K and V
// fragment a warp loads feeds two products, as in FlashAttention-2's forward), two blocks per SM.
// Head dim 128: 8 warps of 16 rows, one block per SM (two row blocks a warp, with a 128-column O
// accumulator and two score blocks, need more than 255 registers and spill).
template <int D>
using ForwardTraits = std::conditional_t<D <= 64, KernelTraits<D, kQueryBlockRows, kKeyTileRows, 2, 2, 2>,
                                         KernelTraits<D, kQueryBlockRows, kKeyTileRows, 2, 1, 1>>;
// 8 warps over 128 query rows, 16 each, one block per SM.
template <int D>
using DqTraits = KernelTraits<D, kQueryBlockRows, kKeyTileRows, 2, 1>;
// The mma.sync dK, dV pass: a warp owns 16 key rows, their dK and dV in registers, and the next
// query tile (Q, dO and its rows' scalars) loads while this one is computed. Head dim 64: 4 warps
// over 64 key rows, two blocks per SM. Head dim 128: 8 warps over 128 key rows, one block per SM
// (FlashAttention-2's backward tile for head dim 128 on sm80: 128 keys, 64-query tiles, 8 warps).
// A 4-warp block of 64 keys needs 107 KiB there with its second stage of Q and dO, so sm_80's
// 164 KiB held one, 4 warps a multiprocessor; 128 keys hold 8 warps at 139 KiB, and every Q and
// dO tile loaded serves twice the keys. Each thread keeps at most 255 registers (65536 for the 8
// warps at 256 each).
constexpr int kv_block_rows(std::int64_t head_dim) { return head_dim <= 64 ? kKeyBlockRows : kWideKeyBlockRows; }
template <int D>
using KvTraits = KernelTraits<D, kv_block_rows(D), kQueryTileRows, 2, D <= 64 ? 2 : 1>;

// Where dQ is added from the dK, dV pass with float atomics (its dS^T through shared memory, one
// more barrier a tile) rather than by the dQ pass, which recomputes S and dP over its own rows:
// only at head dim 64. At 128 the two passes were faster on an H200 (16K tokens, 16 heads:
// backward 127 against 105 TFLOP/s, full mask; 124 against 107, causal; both with dK still in
// shared memory then), so the atomic variant is not built there; at 64 they were even (123
// against 120 full, 121 against 126 causal). The deterministic backward always takes the two
// passes.
template <int D>
inline constexpr bool kAtomicDqPays = D <= 64;

// Runs f.template operator()<D>() for a pair's head dim D, 64 or 128 (the argument checks
// refuse every other): the one place a launcher turns the runtime head dim into its traits'.
template <class F>
void with_head_dim(std::int64_t head_dim, F&& f) {
  if (head_dim == 64) {
    f.template operator()<64>();
  } else {
    f.template operator()<128>();
  }
}

// Bytes of a shared bf16 tile of `rows` rows of `cols` elements.
constexpr std::size_t bf16_tile_bytes(int rows, int cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols + kRowPad) * 2;
}

// Forward: the Q block, per stage a K tile, a V tile and the K tile's positions, then the query
// rows' positions and allowed key intervals (for Partial tiles).
template <class T>
struct ForwardSmem {
  static constexpr std::size_t kTile = bf16_tile_bytes(T::kTileRows, T::kHeadDim);
  static constexpr std::size_t q = 0;
  static constexpr std::size_t k = q + bf16_tile_bytes(T::kRows, T::kHeadDim);  // + stage * kTile
  static constexpr std::size_t v = k + T::kStages * kTile;
  static constexpr std::size_t k_positions = v + T::kStages * kTile;  // + stage * kTileRows
  static constexpr std::size_t q_positions = k_positions + T::kStages * T::kTileRows * sizeof(std::int64_t);
  static constexpr std::size_t key_lo = q_positions + T::kRows * sizeof(std::int64_t);
  static constexpr std::size_t key_hi = key_lo + T::kRows * sizeof(std::int64_t);
  static constexpr std::size_t bytes = key_hi + T::kRows * sizeof(std::int64_t);
};

// Deterministic dQ over one query block: Q and dO (kept), then per stage K, V and positions.
template <class T>
struct DqSmem {
  static constexpr std::size_t kTile = bf16_tile_bytes(T::kTileRows, T::kHeadDim);
  static constexpr std::size_t q = 0;
  static constexpr std::size_t d_o = q + bf16_tile_bytes(T::kRows, T::kHeadDim);
  static constexpr std::size_t k = d_o + bf16_tile_bytes(T::kRows, T::kHeadDim);
  static constexpr std::size_t v = k + T::kStages * kTile;
  static constexpr std::size_t k_positions = v + T::kStages * kTile;
  static constexpr std::size_t bytes = k_positions + T::kStages * T::kTileRows * sizeof(std::int64_t);
};

// dK, dV over one key block: K, V (kept); per stage a query tile's Q and dO and its rows'
// positions, lse and D; dS^T when dQ is added with atomics from here; the key positions.
template <class T, bool kAtomicDq>
struct KvSmem {
  static constexpr std::size_t kTile = bf16_tile_bytes(T::kTileRows, T::kHeadDim);
  static constexpr std::size_t k = 0;
  static constexpr std::size_t v = k + bf16_tile_bytes(T::kRows, T::kHeadDim);
  static constexpr std::size_t q = v + bf16_tile_bytes(T::kRows, T::kHeadDim);  // + stage * kTile
  static constexpr std::size_t d_o = q + T::kStages * kTile;
  static constexpr std::size_t d_s = d_o + T::kStages * kTile;
  static constexpr std::size_t k_positions = d_s + (kAtomicDq ? bf16_tile_bytes(T::kRows, T::kTileRows) : 0);
  static constexpr std::size_t q_positions = k_positions + T::kRows * sizeof(std::int64_t);  // + stage * kTileRows
  static constexpr std::size_t lse = q_positions + T::kStages * T::kTileRows * sizeof(std::int64_t);
  static constexpr std::size_t delta = lse + T::kStages * T::kTileRows * sizeof(float);
  static constexpr std::size_t bytes = delta + T::kStages * T::kTileRows * sizeof(float);
};

static_assert(ForwardSmem<ForwardTraits<128>>::bytes <= kMaxSharedBytesSm80);
static_assert(DqSmem<DqTraits<128>>::bytes <= kMaxSharedBytesSm80);
static_assert(KvSmem<KvTraits<128>, false>::bytes <= kMaxSharedBytesSm80);

}  // namespace burst::rt::gpu
