// Token sets: which tokens of the sequence each ring rank owns, and how many (query, key)
// pairs a mask allows between two such sets.
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
// Tokens, targets and RoPE positions must be permuted with the layout. The sets are arithmetic
// progressions, and the pairs a mask allows between two of them are counted exactly:
//
// Every layout gives a ring rank its tokens as one or two arithmetic progressions
// {start, count, stride}: contiguous is one range (stride 1), zigzag two ranges, striped one
// progression of stride P. The work of a block (its FLOPs) is the number of allowed pairs,
// so the lowering needs that number for every (query block, key block) pair: a million of
// them for a 1024-rank ring. Counting token by token would cost c^2 per block; instead:
//
// For two progressions with the same stride S, q = a + i*S and k = b + j*S, so
//   q - k = (a - b) + (i - j) * S.
// Every mask here is a condition lo <= q - k <= hi (full: none; causal: 0 <= q - k; sliding
// window W: 0 <= q - k <= W - 1), i.e. a range of diagonals t = i - j. The number of (i, j) on
// diagonal t of an n x m grid is N(t) = max(0, min(n, m, n - t, m + t)): a trapezoid, so its
// prefix sum has a closed form and a block costs O(1).
//
// The document mask (causal inside documents of L tokens) cuts both progressions at document
// boundaries and sums the causal count per document. Documents fully inside both spans repeat
// with period S / gcd(L, S) (shifting a document by lcm(L, S) tokens shifts both pieces
// equally), so only one period of documents is counted, plus at most two partial documents at
// each end.
//
// Progressions of different strides (never produced by our layouts, accepted for generality)
// fall back to one O(1) count per element of the shorter progression.
//
// The simulator costs blocks with these counts and the runtime skips the blocks they say are
// empty: one definition of the layouts and masks for both.
#pragma once

#include <array>
#include <cstdint>

#include "common/parallelism.hpp"

namespace burst {

struct Progression {
  std::int64_t start = 0;
  std::int64_t count = 0;
  std::int64_t stride = 1;  // >= 1
};

// The tokens of one ring rank: at most two progressions (zigzag), stored inline so that
// a million of them cost no heap allocation.
struct TokenSet {
  std::array<Progression, 2> parts{};
  int size = 0;

  void add(const Progression& p);  // throws std::logic_error past two parts (a lowering bug)
  [[nodiscard]] std::int64_t tokens() const;
};

// Allowed (query, key) pairs, per sequence and per head: queries from q, keys from k.
[[nodiscard]] std::int64_t allowed_pairs(const Mask& mask, const Progression& q, const Progression& k);
[[nodiscard]] std::int64_t allowed_pairs(const Mask& mask, const TokenSet& q, const TokenSet& k);

// Elements first .. last of a progression (by index); empty when last < first.
struct IndexRange {
  std::int64_t first = 0;
  std::int64_t last = -1;
  [[nodiscard]] std::int64_t count() const { return last >= first ? last - first + 1 : 0; }
};

// The tokens a kernel on the block (q, k) needs: the queries with at least one allowed key and
// the keys with at least one allowed query. Under a band mask (full, causal, sliding window)
// between progressions of one stride they are consecutive: pair (i, j) is allowed for
// t0 <= i - j <= t1, so query i takes part for t0 <= i <= m - 1 + t1 and key j for
// -t1 <= j <= n - 1 - t0 (n queries, m keys). A striped block past its rank is the causal
// triangle of c - 1 tokens: query 0 and key c - 1 meet nothing, and ring-flash-attention runs
// its kernel on q[:, 1:] and k[:, :-1]. The document mask and mixed strides give the whole
// progressions wherever any pair is allowed.
struct PairedTokens {
  IndexRange queries;
  IndexRange keys;
};
[[nodiscard]] PairedTokens paired_tokens(const Mask& mask, const Progression& q, const Progression& k);

// The sequence length must be a multiple of this for the layout on `ring_size` ranks:
// R for contiguous and striped, 2R for zigzag.
[[nodiscard]] std::int64_t layout_multiple(Layout layout, int ring_size);

// Tokens of ring rank `rank` (0 <= rank < ring_size); `seq` a multiple of layout_multiple().
[[nodiscard]] TokenSet ring_tokens(Layout layout, std::int64_t seq, int ring_size, int rank);

}  // namespace burst
