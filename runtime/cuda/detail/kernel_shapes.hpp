// Tile shapes and shared-memory layouts of the CUDA attention kernels, in one header that the
// kernels (nvcc), their launchers and the resource check (g++, tests/gpu/) all read, so the
// bytes a launcher requests are the bytes a kernel carves.
//
// Every kernel runs 4 warps (128 threads) over tiles of 64 query rows x 64 key rows; each
// warp owns 16 rows of its side. A bf16 tile row of d elements is stored d + 8 elements apart:
// the 16-byte pad shifts consecutive rows by 4 banks, so the 8 row addresses of an ldmatrix
// phase hit 8 distinct 16-byte bank groups (no conflicts) without any address swizzle.
// Tiles come first (16-byte aligned for cp.async and ldmatrix), then int64 position arrays,
// then fp32 per-row scalars.
#pragma once

#include <cstddef>
#include <cstdint>

namespace burst::rt::gpu {

inline constexpr int kTileRows = 64;  // query rows per query tile, key rows per key tile
inline constexpr int kWarps = 4;
inline constexpr int kThreads = 32 * kWarps;
inline constexpr int kRowPad = 8;  // bf16 elements of padding per shared-memory tile row

// Largest dynamic shared memory a block may use on sm_80 (A100: 163 KiB); sm_90 allows more.
inline constexpr std::size_t kMaxSharedBytesSm80 = 163 * 1024;

// Bytes of a shared bf16 tile of kTileRows rows of `cols` elements.
constexpr std::size_t bf16_tile_bytes(int cols) {
  return static_cast<std::size_t>(kTileRows) * static_cast<std::size_t>(cols + kRowPad) * 2;
}
constexpr std::size_t row_array_bytes(std::size_t element) { return kTileRows * element; }

// Forward: Q, K, V tiles and the key tile's positions.
template <int D>
struct ForwardSmem {
  static constexpr std::size_t q = 0;
  static constexpr std::size_t k = q + bf16_tile_bytes(D);
  static constexpr std::size_t v = k + bf16_tile_bytes(D);
  static constexpr std::size_t k_positions = v + bf16_tile_bytes(D);
  static constexpr std::size_t bytes = k_positions + row_array_bytes(sizeof(std::int64_t));
};

// Bytes of a shared fp32 accumulator of kTileRows rows of D, rows D + 8 floats apart (so the
// float2 accesses of a half-warp, 4 rows x 4 threads, fall in distinct banks).
constexpr std::size_t fp32_rows_bytes(int cols) {
  return static_cast<std::size_t>(kTileRows) * static_cast<std::size_t>(cols + 8) * 4;
}

// Backward over one key tile: K, V (kept), Q, dO (per query tile), dS^T when dQ is added with
// atomics from here, the fp32 dK accumulator, then the positions of both tiles, the query
// rows' allowed key intervals, and the rows' lse and D.
template <int D, bool kAtomicDq>
struct BackwardKvSmem {
  static constexpr std::size_t k = 0;
  static constexpr std::size_t v = k + bf16_tile_bytes(D);
  static constexpr std::size_t q = v + bf16_tile_bytes(D);
  static constexpr std::size_t d_o = q + bf16_tile_bytes(D);
  static constexpr std::size_t d_s = d_o + bf16_tile_bytes(D);
  static constexpr std::size_t d_k = d_s + (kAtomicDq ? bf16_tile_bytes(kTileRows) : 0);
  static constexpr std::size_t k_positions = d_k + fp32_rows_bytes(D);
  static constexpr std::size_t q_positions = k_positions + row_array_bytes(sizeof(std::int64_t));
  static constexpr std::size_t key_lo = q_positions + row_array_bytes(sizeof(std::int64_t));
  static constexpr std::size_t key_hi = key_lo + row_array_bytes(sizeof(std::int64_t));
  static constexpr std::size_t lse = key_hi + row_array_bytes(sizeof(std::int64_t));
  static constexpr std::size_t delta = lse + row_array_bytes(sizeof(float));
  static constexpr std::size_t bytes = delta + row_array_bytes(sizeof(float));
};

// Deterministic dQ over one query tile: Q, dO (kept), K, V (per key tile), key positions.
template <int D>
struct BackwardDqSmem {
  static constexpr std::size_t q = 0;
  static constexpr std::size_t d_o = q + bf16_tile_bytes(D);
  static constexpr std::size_t k = d_o + bf16_tile_bytes(D);
  static constexpr std::size_t v = k + bf16_tile_bytes(D);
  static constexpr std::size_t k_positions = v + bf16_tile_bytes(D);
  static constexpr std::size_t bytes = k_positions + row_array_bytes(sizeof(std::int64_t));
};

static_assert(BackwardKvSmem<128, true>::bytes <= kMaxSharedBytesSm80);
static_assert(ForwardSmem<128>::bytes <= kMaxSharedBytesSm80);
static_assert(BackwardDqSmem<128>::bytes <= kMaxSharedBytesSm80);

}  // namespace burst::rt::gpu
