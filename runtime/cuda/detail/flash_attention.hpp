// Host API of the CUDA attention kernels over one block pair (docs/runtime-cuda.md).
//
// The math is attention.hpp's, on the device: bf16 Q, K, V, dO in device memory, fp32
// accumulation on tensor cores (mma.sync m16n8k16 bf16 -> fp32), fp32 outputs. Shapes:
// Q, O, dO, dQ [q_tokens, heads, head_dim]; K, V, dK, dV [k_tokens, kv_heads, head_dim];
// lse, D [q_tokens * heads]; positions are int64 global token positions in device memory.
// The mask is a hd::MaskView whose block-sparse table (if any) is in device memory, and the
// work is the tile lists (tile_list.hpp) copied to the device, one per walking direction and
// key-major block size (kernel_traits.hpp): the kernels visit only their tiles and apply the
// element predicate on Partial ones.
//
//   flash_forward    O (normalised) and lse (natural log); a row with no allowed key gets
//                    O = 0 and lse = -inf (never FlashAttention's +inf)
//   flash_backward   ADDS into dQ, dK, dV (fp32) given the final lse and D = rowsum(O * dO);
//                    dQ by float atomics, or deterministic: a second pass owns dQ rows
//   merge_partials   folds (o_i, lse_i) into (o, lse) in place (hd/partial_merge.hpp)
//   attention_delta  D = rowsum(O * dO), fp32
//
// head_dim 64 or 128; heads a multiple of kv_heads (grouped-query attention reads kv head
// h / (heads / kv_heads) in place). Launches are asynchronous on `stream`; the arguments are
// checked first and a bad one throws burst::Error naming it ("flash_forward: head_dim").
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "common/bf16.hpp"
#include "runtime/cuda/detail/kernel_traits.hpp"
#include "runtime/cuda/kernel_path.hpp"
#include "runtime/kernels/hd/mask.hpp"
#include "runtime/kernels/hd/tile_kind.hpp"

namespace burst::rt::gpu {

struct PairShape {
  std::int64_t q_tokens = 0;
  std::int64_t k_tokens = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
};

// One half of a tile list in device memory, in CSR form: block b walks tiles[offsets[b] ..
// offsets[b + 1]).
struct DeviceTileWalk {
  std::int64_t blocks = 0;
  const std::int32_t* offsets = nullptr;  // blocks + 1
  const hd::TileRef* tiles = nullptr;
};

// by_query: blocks of kQueryBlockRows queries walking key tiles of kKeyTileRows (TileList's
// by_query of build_tile_list(..., kQueryBlockRows, kKeyTileRows)); by_key: blocks of
// kKeyBlockRows keys walking query tiles of kQueryTileRows (by_key of build_tile_list(...,
// kQueryTileRows, kKeyBlockRows)); by_wide_key: the same over blocks of kWideKeyBlockRows keys,
// which the head-dim-128 mma.sync dK, dV pass walks (kv_block_rows); every pair carries all three.
struct DeviceTileList {
  DeviceTileWalk by_query;
  DeviceTileWalk by_key;
  DeviceTileWalk by_wide_key;

  // The key-major walk over blocks of `rows` keys (kKeyBlockRows or kWideKeyBlockRows).
  [[nodiscard]] BURST_HOST_DEVICE const DeviceTileWalk& by_key_blocks_of(int rows) const {
    return rows == kWideKeyBlockRows ? by_wide_key : by_key;
  }
};

struct PairInputs {
  PairShape shape;
  const Bf16* q = nullptr;
  const Bf16* k = nullptr;
  const Bf16* v = nullptr;
  const std::int64_t* q_positions = nullptr;
  const std::int64_t* k_positions = nullptr;
  hd::MaskView mask;
  DeviceTileList tiles;
};

// Each runs on the path `choice` asks for on this device (kernel_path.hpp) and returns it; a
// choice the device cannot run throws burst::Error saying why.
KernelPath flash_forward(const PairInputs& in, float* o, float* lse, cudaStream_t stream,
                         KernelPathChoice choice = KernelPathChoice::Auto);

// What TMA needs of an operand's address (16-byte alignment).
inline bool tma_aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

struct BackwardInputs {
  const Bf16* d_o = nullptr;
  const float* lse = nullptr;    // final, merged over all key blocks
  const float* delta = nullptr;  // D = rowsum(O * dO)
};
struct Gradients {
  float* d_q = nullptr;
  float* d_k = nullptr;
  float* d_v = nullptr;
};

// Adds this pair's dQ, dK, dV. `deterministic`: no float atomics, bitwise repeatable (the wgmma
// path always is).
KernelPath flash_backward(const PairInputs& in, const BackwardInputs& grad_in, const Gradients& out, bool deterministic,
                          cudaStream_t stream, KernelPathChoice choice = KernelPathChoice::Auto);

// rows = tokens * heads rows of head_dim floats each.
void merge_partials(float* o, float* lse, const float* o_i, const float* lse_i, std::int64_t rows,
                    std::int64_t head_dim, cudaStream_t stream);
void attention_delta(const float* o, const float* d_o, float* delta, std::int64_t rows, std::int64_t head_dim,
                     cudaStream_t stream);

}  // namespace burst::rt::gpu
