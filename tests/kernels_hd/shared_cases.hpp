// What several shared-header tests use: position sets to classify and mask (contiguous runs,
// the ring layouts - zigzag: two distant chunks, striped: every P-th token - and random subsets,
// so that tile ranges interleave the way they do in real ring steps), and a block-sparse pattern.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace burst::test {

inline std::vector<std::int64_t> run_of(std::int64_t first, std::int64_t count) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) p[static_cast<std::size_t>(i)] = first + i;
  return p;
}

inline std::vector<std::int64_t> zigzag_of(std::int64_t n, std::int64_t ranks, std::int64_t rank) {
  const std::int64_t chunk = n / (2 * ranks);
  std::vector<std::int64_t> p = run_of(rank * chunk, chunk);
  const std::vector<std::int64_t> tail = run_of((2 * ranks - 1 - rank) * chunk, chunk);
  p.insert(p.end(), tail.begin(), tail.end());
  return p;
}

inline std::vector<std::int64_t> striped_of(std::int64_t n, std::int64_t ranks, std::int64_t rank) {
  std::vector<std::int64_t> p;
  for (std::int64_t t = rank; t < n; t += ranks) p.push_back(t);
  return p;
}

// A block-sparse pattern: the diagonal, the first column and every third diagonal below and above.
inline bool block_band(std::int64_t qb, std::int64_t kb) { return qb == kb || kb == 0 || (qb - kb) % 3 == 0; }

// `count` distinct positions below n, in random order.
inline std::vector<std::int64_t> random_subset(std::int64_t n, std::int64_t count, std::mt19937& rng) {
  std::vector<std::int64_t> all = run_of(0, n);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(static_cast<std::size_t>(count));
  return all;
}

}  // namespace burst::test
