// The non-empty tiles of one block pair, computed on the host for the CUDA kernels.
//
// Queries are cut into tiles of tile_q rows and keys into tiles of tile_k rows, in row order
// (the last tile of each side may be short). Every (query tile, key tile) pair is classified
// from its rows' position ranges with the shared classifier (hd/tile_kind.hpp); a Partial pair
// is then checked element by element (hd/mask.hpp) and dropped when no pair attends, so the
// kernels never load a tile that contributes nothing. What remains is listed twice, in CSR form:
//   by query tile: the key tiles of query tile i are by_query[by_query_offsets[i] ..
//                  by_query_offsets[i + 1]), ascending (the forward and the dQ pass)
//   by key tile:   the query tiles of key tile j, likewise (the dK, dV pass)
// Each entry carries its kind: a Full tile runs without the element predicate.
//
// Every mask reduces to this: causal, sliding, document and block-sparse masks over any layout
// (contiguous, zigzag, striped) are just different lists. The counts are per head (the list is
// the same for every head) and feed KernelStats.
//
// Cost: classification is O(q_tiles x k_tiles); the element check of a Partial tile stops at
// its first allowed pair (an empty one costs tile_q x tile_k tests); allowed pairs are counted
// per query row by binary search over the sorted key positions, O(nq log nk), except under a
// block-sparse table, where non-empty Partial tiles are counted element by element.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/kernels/attention_mask.hpp"
#include "runtime/kernels/hd/tile_kind.hpp"

namespace burst::rt {

struct TileList {
  std::int64_t tile_q = 0;
  std::int64_t tile_k = 0;
  std::int64_t q_tiles = 0;
  std::int64_t k_tiles = 0;
  std::vector<std::int32_t> by_query_offsets;  // q_tiles + 1
  std::vector<hd::TileRef> by_query;           // key tiles, per query tile
  std::vector<std::int32_t> by_key_offsets;    // k_tiles + 1
  std::vector<hd::TileRef> by_key;             // query tiles, per key tile

  // Per head:
  std::int64_t tiles_computed = 0;  // listed tiles
  std::int64_t tiles_skipped = 0;   // q_tiles * k_tiles - tiles_computed
  double scores = 0;                // rows x cols summed over the listed tiles
  double allowed_pairs = 0;         // (query, key) pairs that attend
};

// Throws burst::Error naming the argument for tiles < 1, negative positions or positions past a
// block-sparse table, and when the list would not fit 32-bit offsets.
[[nodiscard]] TileList build_tile_list(std::span<const std::int64_t> q_positions,
                                       std::span<const std::int64_t> k_positions, const AttentionMask& mask,
                                       std::int64_t tile_q, std::int64_t tile_k);

// The lists the CUDA kernels walk (gpu/kernel_traits.hpp): by_query's geometry is the
// forward's and the dQ pass's (query blocks of kQueryBlockRows, key tiles of kKeyTileRows), and
// only its by_query half is read; by_key's is the dK, dV passes' (query tiles of
// kQueryTileRows, key blocks of kKeyBlockRows), only its by_key half read; by_wide_key the same
// over key blocks of kWideKeyBlockRows, which the mma.sync dK, dV pass walks at head dim 128
// (gpu::kv_block_rows). A block pair's lists serve every head dim (a pair is cached by its
// positions and mask alone), so all three are built.
struct KernelTileLists {
  TileList by_query;
  TileList by_key;
  TileList by_wide_key;
};
[[nodiscard]] KernelTileLists build_kernel_tile_lists(std::span<const std::int64_t> q_positions,
                                                      std::span<const std::int64_t> k_positions,
                                                      const AttentionMask& mask);

}  // namespace burst::rt
