// The tokens of a batch grouped by vocabulary row, built on the host for the embedding
// backward on the GPU (training_kernels.hpp). Without atomics, a row of dtable must be
// summed by one owner in a fixed order: the kernel gives each distinct token id one thread
// block, which adds the gradients of that id's tokens in ascending token order, exactly the
// order of the CPU's embedding_backward. The token ids are on the host anyway (the corpus
// reads them there), so grouping them there costs a sort and an upload of three arrays.
//
//   rows     the distinct ids, ascending (one block each)
//   offsets  rows.size() + 1 entries: row g's tokens are token_index[offsets[g], offsets[g+1])
//   token_index  the token indices, grouped by id, ascending within a group
// An id outside [0, vocab) throws burst::Error naming it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace burst::rt::gpu {

struct TokenGroups {
  std::vector<std::int32_t> rows;
  std::vector<std::int32_t> offsets;
  std::vector<std::int32_t> token_index;
};

[[nodiscard]] TokenGroups group_tokens(std::span<const std::int32_t> tokens, std::int64_t vocab);

}  // namespace burst::rt::gpu
