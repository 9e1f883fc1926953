// ZeRO's shard layout: every float of every unit belongs to exactly one rank's piece, pieces of
// a unit are equal (padding the last), a shard round-trips through assemble, and the training
// model's units tile its flat vector.
#include <catch2/catch.hpp>

#include <numeric>
#include <vector>

#include "runtime/training/shard_map.hpp"
#include "tests/support/error_text.hpp"
#include "tests/support/ring_plan.hpp"

using namespace burst;
using namespace burst::rt;

TEST_CASE("each unit is cut into equal pieces, one a rank, padding the last", "[zero][shard_map]") {
  // Units of 10, 3 and 8 floats over 4 ranks: pieces of 3, 1 and 2 floats; shards of 6.
  const ShardMap map({{0, 10}, {10, 3}, {13, 8}}, 4);
  CHECK(map.total() == 21);
  CHECK(map.shard_size() == 6);
  CHECK(map.piece_size(0) == 3);
  CHECK(map.padded_size(0) == 12);
  CHECK(map.piece_at(2) == 4);
  // Rank 3 holds float 9 of unit 0 (then 2 floats of padding), nothing of unit 1, floats 19-20 of unit 2.
  const std::vector<ShardPiece> last = map.pieces(3);
  REQUIRE(last.size() == 3);
  CHECK((last[0].flat == 9 && last[0].count == 1 && last[0].at == 0));
  CHECK(last[1].count == 0);
  CHECK((last[2].flat == 19 && last[2].count == 2 && last[2].at == 4));
}

TEST_CASE("every float belongs to one rank, and the shards assemble back to the whole vector", "[zero][shard_map]") {
  for (const int ranks : {1, 2, 3, 4, 7}) {
    const ShardMap map({{0, 10}, {10, 3}, {13, 8}, {21, 1}}, ranks);
    std::vector<int> owners(map.total(), 0);
    for (int r = 0; r < ranks; ++r) {
      for (const ShardPiece& p : map.pieces(r)) {
        for (std::size_t i = 0; i < p.count; ++i) ++owners[p.flat + i];
      }
    }
    CHECK(std::count(owners.begin(), owners.end(), 1) == static_cast<std::ptrdiff_t>(map.total()));
    std::vector<float> whole(map.total());
    std::iota(whole.begin(), whole.end(), 1.0f);
    std::vector<float> shards;
    for (int r = 0; r < ranks; ++r) {
      const std::vector<float> shard = map.shard_of(whole, r);
      REQUIRE(shard.size() == map.shard_size());
      shards.insert(shards.end(), shard.begin(), shard.end());
    }
    INFO(ranks << " ranks");
    CHECK(map.assemble(shards) == whole);
  }
}

TEST_CASE("the model's units tile its parameters; bad maps are refused", "[zero][shard_map]") {
  const plan::Plan plan =
      test::training_plan(1, 1, Layout::Contiguous, BackwardMode::QRing, CheckpointPolicy::None, 0, 1);
  const ModelLayout model(plan.job.model);
  const std::vector<Slice> units = model.units();
  REQUIRE(units.size() == model.layers.size() + 2);
  const ShardMap map(units, 4);
  CHECK(map.total() == model.size());
  CHECK(units[model.head_unit()].offset == model.final_norm.offset);
  CHECK(units[ModelLayout::layer_unit(1)].offset == model.layers[1].attn_norm.offset);
  CHECK(test::error_text([] {
          (void)ShardMap({{0, 4}, {5, 2}}, 2);
        }).find("a unit starts at float 5") != std::string::npos);
  CHECK(test::error_text([] { (void)ShardMap({{0, 4}}, 0); }).find("0 ranks") != std::string::npos);
  CHECK(test::error_text([&] { (void)map.assemble(std::vector<float>(3)); }).find("3 floats") != std::string::npos);
}
