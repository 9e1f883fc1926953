// The shape of the block a ring step computes (PairTable::shape): which query rows and key
// columns take part, and whether any part pair is only partly allowed. Ring of 4, c = 2048
// tokens per rank; zigzag ranks hold two halves of 1024 (chunks r and 7 - r).
#include <catch2/catch.hpp>

#include "simulator/detail/attention/ring_pass.hpp"

using namespace burst;
using namespace burst::sim;

namespace {

constexpr std::int64_t kSeq = 8192, kRank = kSeq / 4, kHalf = kRank / 2;

void check_shape(const PairTable& t, int q, int k, std::int64_t rows, std::int64_t columns, bool masked) {
  INFO("queries of rank " << q << ", keys of rank " << k);
  const BlockShape s = t.shape(q, k);
  CHECK(s.rows == rows);
  CHECK(s.columns == columns);
  CHECK(s.masked == masked);
}

}  // namespace

TEST_CASE("zigzag: an earlier block meets the first half of the keys, a later one the second half of the queries") {
  const PairTable t(Mask{}, Layout::Zigzag, kSeq, 4);
  // Keys of rank 1 (chunks 1 and 6) for queries of rank 2 (chunks 2 and 5): both query chunks
  // see chunk 1 whole and chunk 6 not at all: a full c x c/2 block.
  check_shape(t, 2, 1, kRank, kHalf, false);
  // Keys of rank 2 for queries of rank 1: only chunk 6 of the queries sees them, all of them.
  check_shape(t, 1, 2, kHalf, kRank, false);
  // Its own block: two causal triangles and one full quarter.
  check_shape(t, 1, 1, kRank, kRank, true);
  CHECK(t.at(2, 1) == kRank * kHalf);
}

TEST_CASE("contiguous and striped: whole blocks, masked on the diagonal (contiguous) or everywhere (striped)") {
  const PairTable contiguous(Mask{}, Layout::Contiguous, kSeq, 4);
  check_shape(contiguous, 2, 1, kRank, kRank, false);
  check_shape(contiguous, 1, 1, kRank, kRank, true);
  check_shape(contiguous, 1, 2, 0, 0, false);  // nothing allowed: no kernel
  const PairTable striped(Mask{}, Layout::Striped, kSeq, 4);
  check_shape(striped, 2, 1, kRank, kRank, true);
  // Past its rank (keys 4j + 2 for queries 4i + 1) a striped block is the causal triangle
  // i > j: the rank's first query and the block's last key meet nothing, so the kernel is
  // c-1 x c-1 (ring-flash-attention runs it on q[:, 1:] and k[:, :-1]).
  check_shape(striped, 1, 2, kRank - 1, kRank - 1, true);
  CHECK(striped.at(1, 2) == (kRank - 1) * kRank / 2);
  const PairTable full(Mask{.kind = MaskKind::Full}, Layout::Zigzag, kSeq, 4);
  check_shape(full, 1, 2, kRank, kRank, false);
}

TEST_CASE("a sliding window's block is the rows and columns its window reaches") {
  // Window of 512 on contiguous ranks of 2048: the previous rank's block reaches the first 511
  // queries and the last 511 keys; two ranks back, nothing.
  const PairTable t(Mask{.kind = MaskKind::SlidingWindow, .window = 512}, Layout::Contiguous, kSeq, 4);
  check_shape(t, 2, 1, 511, 511, true);
  check_shape(t, 2, 2, kRank, kRank, true);
  check_shape(t, 3, 1, 0, 0, false);
}

TEST_CASE("document masks count part pairs directly and shape the same way") {
  // Documents of 2048 tokens: contiguous rank r holds exactly document r.
  const PairTable t(Mask{.kind = MaskKind::Document, .doc_len = 2048}, Layout::Contiguous, kSeq, 4);
  check_shape(t, 1, 1, kRank, kRank, true);
  check_shape(t, 2, 1, 0, 0, false);
}
