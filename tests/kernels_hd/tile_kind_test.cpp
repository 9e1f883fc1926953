// hd::classify against brute force: over contiguous, zigzag, striped and random position
// sets cut into tiles, a tile called Empty has no attending pair and one called Full has only
// attending pairs, for every mask; and on contiguous tiles the classifier is also tight where
// it should be (whole tiles below the causal diagonal are Full, above it Empty).
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <span>

#include "runtime/kernels/attention_mask.hpp"
#include "runtime/kernels/hd/tile_kind.hpp"
#include "tests/kernels_hd/shared_cases.hpp"

using namespace burst;

namespace {

bool upper(std::int64_t qb, std::int64_t kb) { return kb <= qb; }

std::vector<std::pair<const char*, rt::AttentionMask>> classified_masks() {
  return {
      {"full", {Mask{MaskKind::Full}, {}}},
      {"causal", {Mask{MaskKind::Causal}, {}}},
      {"sliding:7", {Mask{MaskKind::SlidingWindow, 7}, {}}},
      {"sliding:40", {Mask{MaskKind::SlidingWindow, 40}, {}}},
      {"document:16", {Mask{MaskKind::Document, 0, 16}, {}}},
      {"document:50", {Mask{MaskKind::Document, 0, 50}, {}}},
      {"causal + band", {Mask{MaskKind::Causal}, rt::BlockSparse::from(8, 32, test::block_band)}},
      {"full + lower blocks", {Mask{MaskKind::Full}, rt::BlockSparse::from(8, 32, upper)}},
  };
}

struct Counts {
  std::int64_t allowed = 0, pairs = 0;
};

Counts brute_force(const rt::hd::MaskView& view, std::span<const std::int64_t> q, std::span<const std::int64_t> k) {
  Counts c;
  for (const std::int64_t qp : q) {
    for (const std::int64_t kp : k) {
      c.allowed += rt::hd::attends(view, qp, kp) ? 1 : 0;
      ++c.pairs;
    }
  }
  return c;
}

// Classifies every (query tile, key tile) pair of the two position sets; returns how many
// tiles of each kind were seen, failing on any wrong verdict.
std::array<std::int64_t, 3> check_all_tiles(const rt::AttentionMask& mask, const std::vector<std::int64_t>& q,
                                            const std::vector<std::int64_t>& k, std::size_t tile_q,
                                            std::size_t tile_k) {
  const rt::hd::MaskView view = rt::view_of(mask);
  std::array<std::int64_t, 3> seen{};
  for (std::size_t q0 = 0; q0 < q.size(); q0 += tile_q) {
    const std::span<const std::int64_t> qs(q.data() + q0, std::min(tile_q, q.size() - q0));
    for (std::size_t k0 = 0; k0 < k.size(); k0 += tile_k) {
      const std::span<const std::int64_t> ks(k.data() + k0, std::min(tile_k, k.size() - k0));
      const rt::TileKind kind = rt::hd::classify(view, rt::range_of(qs), rt::range_of(ks));
      CHECK(kind == rt::classify(mask, rt::range_of(qs), rt::range_of(ks)));
      const Counts c = brute_force(view, qs, ks);
      if (kind == rt::TileKind::Empty) CHECK(c.allowed == 0);
      if (kind == rt::TileKind::Full) CHECK(c.allowed == c.pairs);
      ++seen[static_cast<std::size_t>(kind)];
    }
  }
  return seen;
}

}  // namespace

TEST_CASE("tile classification is never wrong on ring layouts and random sets") {
  std::mt19937 rng(11);
  const std::int64_t n = 240;
  const std::vector<std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>> sets{
      {test::run_of(0, n), test::run_of(0, n)},
      {test::zigzag_of(n, 3, 2), test::zigzag_of(n, 3, 0)},
      {test::zigzag_of(n, 4, 0), test::zigzag_of(n, 4, 3)},
      {test::striped_of(n, 3, 1), test::striped_of(n, 3, 2)},
      {test::striped_of(n, 4, 0), test::striped_of(n, 4, 3)},
      {test::random_subset(n, 100, rng), test::random_subset(n, 90, rng)},
  };
  for (const auto& [name, mask] : classified_masks()) {
    for (std::size_t s = 0; s < sets.size(); ++s) {
      for (const auto& [tq, tk] : {std::pair<std::size_t, std::size_t>{8, 8}, {16, 5}, {64, 64}, {1, 1}}) {
        INFO("mask " << name << ", position set " << s << ", tiles " << tq << " x " << tk);
        check_all_tiles(mask, sets[s].first, sets[s].second, tq, tk);
      }
    }
  }
}

TEST_CASE("on contiguous tiles the causal classifier is tight") {
  const rt::AttentionMask causal{Mask{MaskKind::Causal}, {}};
  const auto positions = test::run_of(0, 256);
  const auto seen = check_all_tiles(causal, positions, positions, 32, 32);
  CHECK(seen[static_cast<std::size_t>(rt::TileKind::Full)] == 28);    // below the diagonal: 8 * 7 / 2
  CHECK(seen[static_cast<std::size_t>(rt::TileKind::Empty)] == 28);   // above it
  CHECK(seen[static_cast<std::size_t>(rt::TileKind::Partial)] == 8);  // on it
}

TEST_CASE("a block-sparse table decides tiles inside one block pair exactly") {
  const rt::AttentionMask mask{Mask{MaskKind::Full}, rt::BlockSparse::from(8, 32, test::block_band)};
  const rt::hd::MaskView view = rt::view_of(mask);
  for (std::int64_t qb = 0; qb < 32; ++qb) {
    for (std::int64_t kb = 0; kb < 32; ++kb) {
      const rt::TileKind kind = rt::hd::classify(view, {qb * 8, qb * 8 + 7}, {kb * 8, kb * 8 + 7});
      CHECK(kind == (test::block_band(qb, kb) ? rt::TileKind::Full : rt::TileKind::Empty));
    }
  }
}
