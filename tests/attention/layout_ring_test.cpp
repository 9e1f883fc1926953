// Layouts partition the sequence as documented; ring schedules visit every rank once.
#include <catch2/catch.hpp>

#include <algorithm>

#include "brute_force.hpp"

using namespace burst::sim;
using namespace burst::sim::testing;

TEST_CASE("every layout gives each token to exactly one ring rank, c = seq / R each", "[layout]") {
  for (const Layout layout : {Layout::Contiguous, Layout::Zigzag, Layout::Striped}) {
    for (const int ring : {1, 2, 3, 5, 8, 16}) {
      const std::int64_t seq = layout_multiple(layout, ring) * 3;
      std::vector<int> owner(static_cast<std::size_t>(seq), -1);
      for (int r = 0; r < ring; ++r) {
        const auto tokens = tokens_of(ring_tokens(layout, seq, ring, r));
        REQUIRE(static_cast<std::int64_t>(tokens.size()) == seq / ring);
        for (const auto t : tokens) {
          REQUIRE(t >= 0);
          REQUIRE(t < seq);
          REQUIRE(owner[static_cast<std::size_t>(t)] == -1);
          owner[static_cast<std::size_t>(t)] = r;
        }
      }
      CHECK(std::count(owner.begin(), owner.end(), -1) == 0);
    }
  }
}

TEST_CASE("zigzag holds chunks r and 2R-1-r; striped holds t mod R; contiguous a range", "[layout]") {
  // R = 4, seq = 16: zigzag chunks of 16 / 8 = 2 tokens.
  CHECK(tokens_of(ring_tokens(Layout::Zigzag, 16, 4, 1)) == std::vector<std::int64_t>{2, 3, 12, 13});
  CHECK(tokens_of(ring_tokens(Layout::Striped, 16, 4, 1)) == std::vector<std::int64_t>{1, 5, 9, 13});
  CHECK(tokens_of(ring_tokens(Layout::Contiguous, 16, 4, 1)) == std::vector<std::int64_t>{4, 5, 6, 7});
  CHECK(layout_multiple(Layout::Zigzag, 4) == 8);
  CHECK(layout_multiple(Layout::Striped, 4) == 4);
  CHECK(std::string(to_string(Layout::Zigzag)) == "zigzag");
}

TEST_CASE("every ring visits every rank exactly once", "[ring]") {
  // Flat rings of every size, double rings of every (outer, inner) split, Ulysses degrees.
  for (int u : {1, 2, 4}) {
    for (int outer = 1; outer <= 6; ++outer) {
      for (int inner = 1; inner <= 8; ++inner) {
        const RingGeometry g{
            .world = u * outer * inner, .ulysses = u, .ring = outer * inner, .inner = inner, .outer = outer};
        INFO("U " << u << " outer " << outer << " inner " << inner);
        REQUIRE(check_ring(g).empty());
      }
    }
  }
}

TEST_CASE("check_ring reports a broken geometry", "[ring]") {
  const RingGeometry wrong{.world = 8, .ulysses = 1, .ring = 4, .inner = 4, .outer = 1};
  const auto problems = check_ring(wrong);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] == "sizes do not multiply: world 8 != ring 4 x ulysses 1, or ring != inner 4 x outer 1");
}

TEST_CASE("the double ring schedule: outer step o, inner step i visits ((n-o) mod N, (l-i) mod G)", "[ring]") {
  // 3 nodes x 4 ring ranks: rank (n=1, l=0) = 4 at step t = o*4 + i.
  const RingGeometry g{.world = 12, .ulysses = 1, .ring = 12, .inner = 4, .outer = 3};
  CHECK(g.block_at(4, 0) == 4);
  CHECK(g.block_at(4, 1) == 7);   // (1, 3): the inner ring comes from the left within the node
  CHECK(g.block_at(4, 4) == 0);   // (0, 0): the previous node's block, over the outer ring
  CHECK(g.block_at(4, 9) == 11);  // o = 2, i = 1: ((1-2) mod 3, (0-1) mod 4) = (2, 3)
  CHECK(g.visitor(11, 9) == 4);
}

TEST_CASE("ring geometry and orders follow the strategy and the world", "[ring]") {
  const World world{2, 8};
  AttentionStrategy s = make_strategy(RingKind::Double, Layout::Zigzag, BackwardMode::QRing, 2);
  const RingGeometry g = ring_geometry(s, world);
  CHECK(g.ring == 8);   // 16 ranks / U = 2
  CHECK(g.inner == 4);  // ring ranks per node: 8 GPUs / U = 2
  CHECK(g.outer == 2);
  const auto rings = ring_orders(g);
  // Per Ulysses member: 2 intra rings (one per node) and 4 inter rings (one per inner position).
  REQUIRE(rings.size() == 2 * (2 + 4));
  CHECK(rings[0].level == "intra");
  CHECK(rings[0].order == std::vector<int>{0, 2, 4, 6});  // member 0 of node 0's groups
  CHECK(rings[2].level == "inter");
  CHECK(rings[2].order == std::vector<int>{0, 8});
  CHECK(rings[6].member == 1);
  CHECK(rings[6].order == std::vector<int>{1, 3, 5, 7});

  s.ring = RingKind::Flat;
  const auto flat = ring_orders(ring_geometry(s, world));
  REQUIRE(flat.size() == 2);
  CHECK(flat[1].order == std::vector<int>{1, 3, 5, 7, 9, 11, 13, 15});
  CHECK(std::string(to_string(RingKind::Double)) == "double");
}
