// Shard files and their manifest: a state saved as 4 shards reassembles bit for bit (so any
// rank count or stage can take its own shard of it), a whole state still loads as itself, and a
// corrupt shard, one whose header was edited by hand, a missing one or a shard of another save
// is refused by its name.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <numeric>

#include "runtime/training/state_shards.hpp"
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
  const TrainingState loaded = load_whole_state(path);
  CHECK(loaded.params == whole.params);
  CHECK(loaded.adam_m == whole.adam_m);
  CHECK(loaded.adam_v == whole.adam_v);
  CHECK(loaded.step == 7);
  CHECK(loaded.adam_step == 7);
  CHECK(loaded.meta["lr"] == 0.003);
  CHECK(loaded.meta["zero"]["stage"] == 3);

  const std::string plain = (dir.path / "whole.state").string();
  save_training_state(plain, whole);
  CHECK(load_whole_state(plain).params == whole.params);
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
  CHECK(test::error_text([&] { (void)load_whole_state(path); }).find(shard + ": corrupt: checksum") != std::string::npos);

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
  CHECK(test::error_text([&] { (void)load_whole_state(path); }).find(shard_path(path, 1, 4) + ": corrupt: checksum") !=
        std::string::npos);

  (void)save_four_shards(path, 7);
  std::filesystem::remove(shard_path(path, 1, 4));
  CHECK(test::error_text([&] { (void)load_whole_state(path); }).find(shard_path(path, 1, 4) + ": no such file") !=
        std::string::npos);

  // Rank 3's file from a later save beside a manifest of step 7: two saves mixed.
  (void)save_four_shards(path, 7);
  const std::string other = (dir.path / "t.state").string();
  (void)save_four_shards(other, 9);
  std::filesystem::copy_file(shard_path(other, 3, 4), shard_path(path, 3, 4), std::filesystem::copy_options::overwrite_existing);
  CHECK(test::error_text([&] { (void)load_whole_state(path); })
            .find(shard_path(path, 3, 4) + ": step 9, the manifest says 7") != std::string::npos);
}
