// Launch geometry of the training kernels (training_kernels.hpp), in one header for their .cu
// files and the host code that sizes their workspaces.
//
// Elementwise kernels run kTrainThreads threads per block over a grid-stride loop. The two
// reductions split their input by its size alone, never by the GPU's SM count, so the order of
// every addition, and with it the result's bits, is the same on any device:
//   RMSNorm's dgain  rows in chunks of at least kMinChunkRows, at most kMaxChunks chunks, one
//                    partial dgain row per chunk, then a pass adding the partials in chunk order
//   squared_norm     at most kMaxNormBlocks blocks with a fixed element-to-thread assignment,
//                    one partial per block, then one block adding the partials
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/kernels/hd/index_math.hpp"

namespace burst::rt::gpu {

inline constexpr int kTrainThreads = 256;
inline constexpr std::int64_t kMaxElementBlocks = std::int64_t{1} << 20;
inline constexpr std::int64_t kMinChunkRows = 16;
inline constexpr std::int64_t kMaxChunks = 256;
inline constexpr std::int64_t kMaxNormBlocks = 1024;
inline constexpr std::int64_t kNormElementsPerThread = 4;

// Blocks of a grid-stride loop over `count` elements (count >= 1).
constexpr unsigned elementwise_blocks(std::int64_t count) {
  return static_cast<unsigned>(std::min(hd::ceil_div(count, kTrainThreads), kMaxElementBlocks));
}

struct RowChunks {
  std::int64_t rows_per_chunk = 1;
  std::int64_t chunks = 0;
};

constexpr RowChunks dgain_chunks(std::int64_t rows) {
  if (rows <= 0) return {};
  const std::int64_t wanted = std::min(hd::ceil_div(rows, kMinChunkRows), kMaxChunks);
  const std::int64_t per_chunk = hd::ceil_div(rows, wanted);
  return {per_chunk, hd::ceil_div(rows, per_chunk)};
}

// Blocks of squared_norm's first pass (at least 1, so an empty range sums to 0).
constexpr std::int64_t norm_blocks(std::int64_t count) {
  return std::clamp<std::int64_t>(hd::ceil_div(count, kTrainThreads * kNormElementsPerThread), 1, kMaxNormBlocks);
}

}  // namespace burst::rt::gpu
