// Shard files and their manifest: a state saved as 4 shards reassembles bit for bit (so any
// rank count or stage can take its own shard of it), a whole state still loads as itself, and a
// corrupt shard, one whose header was edited by hand, a missing one or a shard of another save
// is refused by its name.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>

#include "runtime/training/state_shards.hpp"
#include "runtime/training/training_state.hpp"
#include "tests/support/error_text.hpp"
#include "tests/support/temp_dir.hpp"

using namespace burst;
using namespace burst::rt;

namespace {

// A whole state of 21 floats saved by 4 ranks: every rank's shard, then the manifest.
TrainingState save_four_shards(const std::string& path, std::int64_t step) {
  const ShardMap map({{0, 10}, {10, 3}, {13, 8}}, 4);
  TrainingState whole;
  whole.meta = {{"lr", 0.003}};
  whole.step = step;
  whole.adam_step = step;
  whole.params.resize(map.total());
  std::iota(whole.params.begin(), whole.params.end(), 1.0f);
  whole.adam_m = whole.params;
  for (float& x : whole.adam_m) x *= 0.5f;
  whole.adam_v = whole.adam_m;
  for (float& x : whole.adam_v) x *= 0.25f;
  for (int r = 0; r < 4; ++r) {
    TrainingState part{{}, step, map.shard_of(whole.params, r), map.shard_of(whole.adam_m, r), map.shard_of(whole.adam_v, r), step};
    save_shard(path, map, 3, r, part);
  }
  save_manifest(path, map, 3, whole);
  return whole;
}

}  // namespace

TEST_CASE("a state saved as shards reassembles bit for bit; a whole state loads as it is", "[zero][state]") {
  const test::TempDir dir("state-shards");
  const std::string path = (dir.path / "s.state").string();
  const TrainingState whole = save_four_shards(path, 7);
  CHECK(dir.entries() == std::vector<std::string>{"s.state", "s.state.rank0-of-4", "s.state.rank1-of-4",
                                                  "s.state.rank2-of-4", "s.state.rank3-of-4"});
  const TrainingState loaded = load_whole_state(path, 21);
  CHECK(loaded.params == whole.params);
  CHECK(loaded.adam_m == whole.adam_m);
  CHECK(loaded.adam_v == whole.adam_v);
  CHECK(loaded.step == 7);
  CHECK(loaded.adam_step == 7);
  CHECK(loaded.meta["lr"] == 0.003);
  CHECK(loaded.meta["zero"]["stage"] == 3);

  const std::string plain = (dir.path / "whole.state").string();
  save_training_state(plain, whole);
  CHECK(load_whole_state(plain, 21).params == whole.params);
}

TEST_CASE("a corrupt, missing or foreign shard is refused by its name", "[zero][state]") {
  const test::TempDir dir("state-shards-bad");
  const std::string path = (dir.path / "s.state").string();
  (void)save_four_shards(path, 7);
  const std::string shard = shard_path(path, 2, 4);
  {
    std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-3, std::ios::end);
    f.put('\x7f');
  }
  CHECK(test::error_text([&] { (void)load_whole_state(path, 21); }).find(shard + ": corrupt: checksum") != std::string::npos);

  // Rank 1's step edited by hand to the manifest's next save: the checksum covers the header.
  (void)save_four_shards(path, 7);
  {
    std::fstream f(shard_path(path, 1, 4), std::ios::in | std::ios::out | std::ios::binary);
    std::string bytes(256, '\0');  // the magic and header lines, and more
    f.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    const auto at = bytes.find("\"step\":7,");
    REQUIRE(at != std::string::npos);
    f.clear();  // the shard may be shorter than 256 bytes
    f.seekp(static_cast<std::streamoff>(at + 7));
    f.put('9');
  }
  CHECK(test::error_text([&] { (void)load_whole_state(path, 21); }).find(shard_path(path, 1, 4) + ": corrupt: checksum") !=
        std::string::npos);

  (void)save_four_shards(path, 7);
  std::filesystem::remove(shard_path(path, 1, 4));
  CHECK(test::error_text([&] { (void)load_whole_state(path, 21); }).find(shard_path(path, 1, 4) + ": no such file") !=
        std::string::npos);

  // Rank 3's file from a later save beside a manifest of step 7: two saves mixed.
  (void)save_four_shards(path, 7);
  const std::string other = (dir.path / "t.state").string();
  (void)save_four_shards(other, 9);
  std::filesystem::copy_file(shard_path(other, 3, 4), shard_path(path, 3, 4), std::filesystem::copy_options::overwrite_existing);
  CHECK(test::error_text([&] { (void)load_whole_state(path, 21); })
            .find(shard_path(path, 3, 4) + ": step 9, the manifest says 7") != std::string::npos);
}

TEST_CASE("a shard whose pieces wrap past 2^64 or have the wrong shape is refused, not copied", "[zero][state]") {
  const test::TempDir dir("state-shards-crafted");
  const std::string path = (dir.path / "s.state").string();
  const auto craft = [&](const Json& pieces) {
    (void)save_four_shards(path, 7);
    const std::string shard = shard_path(path, 1, 4);
    TrainingState part = load_training_state(shard);
    part.meta["zero"]["pieces"] = pieces;
    save_training_state(shard, part);  // a checksum anyone can recompute
    return test::error_text([&] { (void)load_whole_state(path, 21); });
  };
  // flat + count wraps to 1: the old check (flat + count > size) let it write before the buffer.
  const std::string wrap = craft(Json::array({Json::array({std::numeric_limits<std::uint64_t>::max(), 2, 0})}));
  CHECK(wrap.find(shard_path(path, 1, 4) + ": piece 0 (flat offset 18446744073709551615, 2 floats, at 0 in the shard) "
                  "lies outside the state") != std::string::npos);
  // Past the shard's own floats, and past its moments.
  CHECK(craft(Json::array({Json::array({0, 4, std::numeric_limits<std::uint64_t>::max() - 1})})).find("lies outside the state") !=
        std::string::npos);
  // Not three non-negative integers: a clear error, not an internal JSON exception.
  const std::string shape = craft(Json::array({Json::array({0, -1}), "x"}));
  CHECK(shape.find("bad ZeRO metadata: 'zero/pieces/0' is [0,-1]") != std::string::npos);
  CHECK(shape.find("bad ZeRO metadata: 'zero/pieces/1' is \"x\"") != std::string::npos);
}

TEST_CASE("a manifest whose total or rank count does not fit the model is refused before anything is allocated",
          "[zero][state]") {
  const test::TempDir dir("state-shards-manifest");
  const std::string path = (dir.path / "s.state").string();
  (void)save_four_shards(path, 7);
  CHECK(test::error_text([&] { (void)load_whole_state(path, 22); })
            .find("bad ZeRO metadata: 'zero/total' is 21 floats, this model has 22") != std::string::npos);
  TrainingState manifest = load_training_state(path);
  manifest.meta["zero"]["total"] = std::int64_t{1} << 62;  // would be a 16 EiB allocation
  manifest.meta["zero"]["ranks"] = std::int64_t{1} << 40;
  save_training_state(path, manifest);
  const std::string text = test::error_text([&] { (void)load_whole_state(path, 21); });
  CHECK(text.find("'zero/total' is 4611686018427387904 floats, this model has 21") != std::string::npos);
  CHECK(text.find("'zero/ranks' is 1099511627776 (valid: 1 to 65536)") != std::string::npos);
}
