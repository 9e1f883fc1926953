// The host tile lists of the CUDA kernels (runtime/cuda/detail/tile_list.hpp) against brute force:
// a tile is listed iff one of its pairs attends, a Full entry has only attending pairs, the
// per-key lists are the transpose of the per-query lists, and the counts (tiles, scores,
// allowed pairs) are exact; for every mask over ring layouts, random sets and short tails.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "common/error.hpp"
#include "runtime/cuda/detail/kernel_traits.hpp"
#include "runtime/cuda/detail/tile_list.hpp"
#include "tests/kernels_hd/shared_cases.hpp"

using namespace burst;

namespace {

std::vector<std::pair<const char*, rt::AttentionMask>> listed_masks() {
  return {
      {"full", {Mask{MaskKind::Full}, {}}},
      {"causal", {Mask{MaskKind::Causal}, {}}},
      {"sliding:9", {Mask{MaskKind::SlidingWindow, 9}, {}}},
      {"document:24", {Mask{MaskKind::Document, 0, 24}, {}}},
      {"causal + band", {Mask{MaskKind::Causal}, rt::BlockSparse::from(8, 40, test::block_band)}},
      {"full + band", {Mask{MaskKind::Full}, rt::BlockSparse::from(8, 40, test::block_band)}},
  };
}

std::span<const std::int64_t> rows(const std::vector<std::int64_t>& p, std::int64_t index, std::int64_t tile) {
  const auto first = static_cast<std::size_t>(index * tile);
  return {p.data() + first, std::min(static_cast<std::size_t>(tile), p.size() - first)};
}

void check_against_brute_force(const rt::AttentionMask& mask, const std::vector<std::int64_t>& q,
                               const std::vector<std::int64_t>& k, std::int64_t tile_q, std::int64_t tile_k) {
  const rt::TileList list = rt::build_tile_list(q, k, mask, tile_q, tile_k);
  const rt::hd::MaskView view = rt::view_of(mask);
  REQUIRE(list.q_tiles == (static_cast<std::int64_t>(q.size()) + tile_q - 1) / tile_q);
  REQUIRE(list.k_tiles == (static_cast<std::int64_t>(k.size()) + tile_k - 1) / tile_k);
  REQUIRE(list.by_query_offsets.size() == static_cast<std::size_t>(list.q_tiles + 1));
  REQUIRE(list.by_key_offsets.size() == static_cast<std::size_t>(list.k_tiles + 1));
  REQUIRE(list.by_query_offsets.back() == static_cast<std::int32_t>(list.by_query.size()));
  REQUIRE(list.by_key_offsets.back() == static_cast<std::int32_t>(list.by_key.size()));

  std::set<std::pair<std::int32_t, std::int32_t>> by_query, by_key;
  double allowed_total = 0, scores = 0;
  std::int64_t computed = 0;
  for (std::int64_t qi = 0; qi < list.q_tiles; ++qi) {
    const auto qs = rows(q, qi, tile_q);
    std::int32_t previous = -1;
    for (std::int32_t e = list.by_query_offsets[static_cast<std::size_t>(qi)];
         e < list.by_query_offsets[static_cast<std::size_t>(qi + 1)]; ++e) {
      const rt::hd::TileRef ref = list.by_query[static_cast<std::size_t>(e)];
      CHECK(ref.tile > previous);  // ascending
      previous = ref.tile;
      by_query.insert({static_cast<std::int32_t>(qi), ref.tile});
    }
    for (std::int64_t kj = 0; kj < list.k_tiles; ++kj) {
      const auto ks = rows(k, kj, tile_k);
      std::int64_t allowed = 0;
      for (const std::int64_t qp : qs) {
        for (const std::int64_t kp : ks) allowed += rt::hd::attends(view, qp, kp) ? 1 : 0;
      }
      allowed_total += static_cast<double>(allowed);
      const bool listed = by_query.count({static_cast<std::int32_t>(qi), static_cast<std::int32_t>(kj)}) == 1;
      INFO("tile (" << qi << ", " << kj << "): " << allowed << " attending pairs");
      CHECK(listed == (allowed > 0));
      if (listed) {
        ++computed;
        scores += static_cast<double>(qs.size() * ks.size());
      }
    }
  }
  for (std::int64_t kj = 0; kj < list.k_tiles; ++kj) {
    for (std::int32_t e = list.by_key_offsets[static_cast<std::size_t>(kj)];
         e < list.by_key_offsets[static_cast<std::size_t>(kj + 1)]; ++e) {
      const rt::hd::TileRef ref = list.by_key[static_cast<std::size_t>(e)];
      by_key.insert({ref.tile, static_cast<std::int32_t>(kj)});
      if (ref.kind == rt::TileKind::Full) {
        const auto qs = rows(q, ref.tile, tile_q), ks = rows(k, kj, tile_k);
        for (const std::int64_t qp : qs) {
          for (const std::int64_t kp : ks) CHECK(rt::hd::attends(view, qp, kp));
        }
      }
      CHECK(ref.kind != rt::TileKind::Empty);
    }
  }
  CHECK(by_key == by_query);
  CHECK(list.tiles_computed == computed);
  CHECK(list.tiles_computed + list.tiles_skipped == list.q_tiles * list.k_tiles);
  CHECK(list.scores == scores);
  CHECK(list.allowed_pairs == allowed_total);
}

}  // namespace

TEST_CASE("tile lists list exactly the tiles with an attending pair") {
  std::mt19937 rng(21);
  const std::int64_t n = 300;
  const std::vector<std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>> sets{
      {test::run_of(0, 150), test::run_of(0, 150)},
      {test::run_of(150, 150), test::run_of(0, 150)},
      {test::zigzag_of(n, 2, 1), test::zigzag_of(n, 2, 0)},
      {test::zigzag_of(n, 3, 0), test::zigzag_of(n, 3, 2)},
      {test::striped_of(n, 3, 0), test::striped_of(n, 3, 1)},
      {test::striped_of(n, 4, 3), test::striped_of(n, 4, 0)},
      {test::random_subset(n, 77, rng), test::random_subset(n, 131, rng)},
  };
  for (const auto& [name, mask] : listed_masks()) {
    for (std::size_t s = 0; s < sets.size(); ++s) {
      for (const auto& [tq, tk] :
           {std::pair<std::int64_t, std::int64_t>{64, 64}, {128, 64}, {64, 128}, {16, 8}, {7, 13}}) {
        INFO("mask " << name << ", position set " << s << ", tiles " << tq << " x " << tk);
        check_against_brute_force(mask, sets[s].first, sets[s].second, tq, tk);
      }
    }
  }
}

TEST_CASE("the kernels' three lists have the geometries their kernels walk and list the same pairs") {
  const std::vector<std::int64_t> q = test::zigzag_of(320, 2, 1), k = test::zigzag_of(320, 2, 0);
  for (const auto& [name, mask] : listed_masks()) {
    INFO("mask " << name);
    const rt::KernelTileLists lists = rt::build_kernel_tile_lists(q, k, mask);
    CHECK(lists.by_query.tile_q == rt::gpu::kQueryBlockRows);
    CHECK(lists.by_query.tile_k == rt::gpu::kKeyTileRows);
    CHECK(lists.by_key.tile_q == rt::gpu::kQueryTileRows);
    CHECK(lists.by_key.tile_k == rt::gpu::kKeyBlockRows);
    CHECK(lists.by_query.q_tiles == (160 + rt::gpu::kQueryBlockRows - 1) / rt::gpu::kQueryBlockRows);
    CHECK(lists.by_key.k_tiles == (160 + rt::gpu::kKeyBlockRows - 1) / rt::gpu::kKeyBlockRows);
    CHECK(lists.by_wide_key.tile_q == rt::gpu::kQueryTileRows);
    CHECK(lists.by_wide_key.tile_k == rt::gpu::kWideKeyBlockRows);
    CHECK(lists.by_wide_key.k_tiles == (160 + rt::gpu::kWideKeyBlockRows - 1) / rt::gpu::kWideKeyBlockRows);
    CHECK(lists.by_query.allowed_pairs == lists.by_key.allowed_pairs);
    CHECK(lists.by_wide_key.allowed_pairs == lists.by_key.allowed_pairs);
    CHECK(lists.by_query.allowed_pairs > 0);
  }
  // Each head dim's mma.sync dK, dV pass walks the list of its own key blocks.
  CHECK(rt::gpu::KvTraits<64>::kRows == rt::gpu::kKeyBlockRows);
  CHECK(rt::gpu::KvTraits<128>::kRows == rt::gpu::kWideKeyBlockRows);
}

TEST_CASE("an empty block gives an empty list") {
  const rt::TileList list = rt::build_tile_list({}, test::run_of(0, 10), {Mask{MaskKind::Causal}, {}}, 64, 64);
  CHECK(list.q_tiles == 0);
  CHECK(list.by_query_offsets == std::vector<std::int32_t>{0});
  CHECK(list.by_key_offsets == std::vector<std::int32_t>{0, 0});
  CHECK(list.allowed_pairs == 0);
}

TEST_CASE("tile list arguments are checked by name") {
  const auto p = test::run_of(0, 10);
  const rt::AttentionMask causal{Mask{MaskKind::Causal}, {}};
  CHECK_THROWS_WITH(rt::build_tile_list(p, p, causal, 0, 64), Catch::Contains("build_tile_list: tiles"));
  const std::vector<std::int64_t> negative{3, -1};
  CHECK_THROWS_WITH(rt::build_tile_list(negative, p, causal, 64, 64), Catch::Contains("build_tile_list: q_positions"));
  const rt::AttentionMask sparse{Mask{MaskKind::Causal}, rt::BlockSparse::from(2, 3, test::block_band)};
  CHECK_THROWS_WITH(rt::build_tile_list(p, p, sparse, 64, 64), Catch::Contains("beyond the block-sparse table"));
  CHECK_THROWS_WITH(rt::build_tile_list(p, p, {Mask{MaskKind::Document, 0, 0}, {}}, 64, 64),
                    Catch::Contains("build_tile_list: mask"));
}
