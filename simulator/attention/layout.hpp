// Layouts: which tokens of the sequence each ring rank owns.
//
// With R ring ranks and a sequence of S tokens, every rank owns c = S / R tokens:
//   contiguous  rank r holds [r*c, (r+1)*c). Simple, but under a causal mask rank r's queries
//               see r+1 blocks of keys, so the last rank works about twice the average.
//   zigzag      the sequence is cut into 2R chunks of k = S / (2R); rank r holds chunks r and
//               2R-1-r, an early and a late one, so every rank sees the same number of causal
//               pairs (exactly: k^2 (2R-1) + k (k+1) per rank).
//   striped     token t lives on rank t mod R: one progression of stride R. Balanced too, and
//               "the first half of every rank" is "the first half of the sequence", which
//               sequence-level selective checkpointing needs.
// Tokens, targets and RoPE positions must be permuted with the layout; the simulator only
// needs the sets, as arithmetic progressions (mask.hpp counts pairs between them).
#pragma once

#include <cstdint>

#include "simulator/attention/mask.hpp"

namespace burst::sim {

// The sequence length must be a multiple of this for the layout on `ring_size` ranks:
// R for contiguous and striped, 2R for zigzag.
[[nodiscard]] std::int64_t layout_multiple(Layout layout, int ring_size);

// Tokens of ring rank `rank` (0 <= rank < ring_size); `seq` a multiple of layout_multiple().
[[nodiscard]] TokenSet ring_tokens(Layout layout, std::int64_t seq, int ring_size, int rank);

}  // namespace burst::sim
