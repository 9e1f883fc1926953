// Shard files and their manifest: a state saved as 4 shards reassembles bit for bit (so any
// rank count or stage can take its own shard of it), a whole state and an older burst's manifest
// still load as they did, and a corrupt shard, one whose header was edited by hand, a missing one
// or a shard of another save is refused by its name. A save is one set: a generation whose
// manifest was never flipped (a save cut short) leaves the previous set the one that loads, and
// --keep bounds the complete generations left on disk, removing the half-written ones too.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "runtime/training/detail/state_shards.hpp"
#include "runtime/training/training_state.hpp"
#include "tests/support/error_text.hpp"
#include "tests/support/temp_dir.hpp"

using namespace burst;
using namespace burst::rt;

namespace {

// A whole state of 21 floats saved by 4 ranks as the next generation of `path`: every rank's
// shard, then (unless `complete` is false: a save cut short) the manifest.
TrainingState save_four_shards(const std::string& path, std::int64_t step, bool complete = true) {
  const ShardMap map({{0, 10}, {10, 3}, {13, 8}}, 4);
  const SaveSet set{path, next_generation(path), step};
  TrainingState whole;
  whole.meta = {{"lr", 0.003}};
  whole.step = step;
  whole.adam_step = step;
  whole.params.resize(map.total());
  std::iota(whole.params.begin(), whole.params.end(), static_cast<float>(step));
  whole.adam_m = whole.params;
  for (float& x : whole.adam_m) x *= 0.5f;
  whole.adam_v = whole.adam_m;
  for (float& x : whole.adam_v) x *= 0.25f;
  for (int r = 0; r < 4; ++r) {
    TrainingState part{
        {}, step, map.shard_of(whole.params, r), map.shard_of(whole.adam_m, r), map.shard_of(whole.adam_v, r), step};
    save_shard(set, map, 3, r, part);
  }
  if (complete) save_manifest(set, map, 3, whole);
  return whole;
}

// Rank r's shard file of the set the manifest at `path` names.
std::string shard_file(const std::string& path, int r) {
  return shard_files(load_training_state(path), path).at(static_cast<std::size_t>(r));
}

}  // namespace

TEST_CASE("a state saved as shards reassembles bit for bit; a whole state loads as it is", "[zero][state]") {
  const test::TempDir dir("state-shards");
  const std::string path = (dir.path / "s.state").string();
  const TrainingState whole = save_four_shards(path, 7);
  CHECK(dir.entries() == std::vector<std::string>{"s.state", "s.state.gen1-step7"});
  std::vector<std::string> in_set;
  for (const auto& e : std::filesystem::directory_iterator(dir.path / "s.state.gen1-step7"))
    in_set.push_back(e.path().filename().string());
  std::sort(in_set.begin(), in_set.end());
  CHECK(in_set == std::vector<std::string>{"manifest", "rank0-of-4", "rank1-of-4", "rank2-of-4", "rank3-of-4"});
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
  const std::string shard = shard_file(path, 2);
  {
    std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-3, std::ios::end);
    f.put('\x7f');
  }
  CHECK(test::error_text([&] { (void)load_whole_state(path, 21); }).find(shard + ": corrupt: checksum") !=
        std::string::npos);

  // Rank 1's step edited by hand to the manifest's next save: the checksum covers the header.
  (void)save_four_shards(path, 7);
  {
    std::fstream f(shard_file(path, 1), std::ios::in | std::ios::out | std::ios::binary);
    std::string bytes(256, '\0');  // the magic and header lines, and more
    f.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    const auto at = bytes.find("\"step\":7,");
    REQUIRE(at != std::string::npos);
    f.clear();  // the shard may be shorter than 256 bytes
    f.seekp(static_cast<std::streamoff>(at + 7));
    f.put('9');
  }
  CHECK(test::error_text([&] { (void)load_whole_state(path, 21); }).find(shard_file(path, 1) + ": corrupt: checksum") !=
        std::string::npos);

  (void)save_four_shards(path, 7);
  std::filesystem::remove(shard_file(path, 1));
  CHECK(test::error_text([&] { (void)load_whole_state(path, 21); }).find(shard_file(path, 1) + ": no such file") !=
        std::string::npos);

  // Rank 3's file from a later save beside a manifest of step 7: two saves mixed.
  (void)save_four_shards(path, 7);
  const std::string other = (dir.path / "t.state").string();
  (void)save_four_shards(other, 9);
  std::filesystem::copy_file(shard_file(other, 3), shard_file(path, 3),
                             std::filesystem::copy_options::overwrite_existing);
  CHECK(test::error_text([&] {
          (void)load_whole_state(path, 21);
        }).find(shard_file(path, 3) + ": step 9, the manifest says 7") != std::string::npos);
}

TEST_CASE("a shard whose pieces wrap past 2^64 or have the wrong shape is refused, not copied", "[zero][state]") {
  const test::TempDir dir("state-shards-crafted");
  const std::string path = (dir.path / "s.state").string();
  const auto craft = [&](const Json& pieces) {
    (void)save_four_shards(path, 7);
    const std::string shard = shard_file(path, 1);
    TrainingState part = load_training_state(shard);
    part.meta["zero"]["pieces"] = pieces;
    save_training_state(shard, part);  // a checksum anyone can recompute
    return test::error_text([&] { (void)load_whole_state(path, 21); });
  };
  // flat + count wraps to 1: the old check (flat + count > size) let it write before the buffer.
  const std::string wrap = craft(Json::array({Json::array({std::numeric_limits<std::uint64_t>::max(), 2, 0})}));
  CHECK(wrap.find(shard_file(path, 1) + ": piece 0 (flat offset 18446744073709551615, 2 floats, at 0 in the shard) "
                                        "lies outside the state") != std::string::npos);
  // Past the shard's own floats, and past its moments.
  CHECK(craft(Json::array({Json::array({0, 4, std::numeric_limits<std::uint64_t>::max() - 1})}))
            .find("lies outside the state") != std::string::npos);
  // Not three non-negative integers: a clear error, not an internal JSON exception.
  const std::string shape = craft(Json::array({Json::array({0, -1}), "x"}));
  CHECK(shape.find("bad ZeRO metadata: 'zero/pieces/0' is [0,-1]") != std::string::npos);
  CHECK(shape.find("bad ZeRO metadata: 'zero/pieces/1' is \"x\"") != std::string::npos);
}

TEST_CASE("shards that overlap or leave a gap, or a manifest naming a file outside its directory, are refused",
          "[zero][state]") {
  const test::TempDir dir("state-shards-tiling");
  const std::string path = (dir.path / "s.state").string();
  (void)save_four_shards(path, 7);
  const std::string shard = shard_file(path, 1);
  TrainingState part = load_training_state(shard);
  REQUIRE_FALSE(part.meta["zero"]["pieces"].empty());
  for (Json& piece : part.meta["zero"]["pieces"]) piece[0] = 0;  // as many floats placed: some twice, some never
  save_training_state(shard, part);
  const std::string overlap = test::error_text([&] { (void)load_whole_state(path, 21); });
  CHECK(overlap.find(path + ": its 4 shards do not tile the 21 parameters: floats from 0 are placed twice") !=
        std::string::npos);

  (void)save_four_shards(path, 8);
  TrainingState manifest = load_training_state(path);
  manifest.meta["zero"]["files"][2] = "../../etc/passwd";
  save_training_state(path, manifest);
  CHECK(test::error_text([&] { (void)load_whole_state(path, 21); })
            .find("bad ZeRO metadata: 'zero/files/2' is \"../../etc/passwd\" (valid: a file name relative to the "
                  "manifest's directory, without '..')") != std::string::npos);
}

TEST_CASE("a manifest whose total or rank count does not fit the model is refused before anything is allocated",
          "[zero][state]") {
  const test::TempDir dir("state-shards-manifest");
  const std::string path = (dir.path / "s.state").string();
  (void)save_four_shards(path, 7);
  CHECK(test::error_text([&] {
          (void)load_whole_state(path, 22);
        }).find("bad ZeRO metadata: 'zero/total' is 21 floats, this model has 22") != std::string::npos);
  TrainingState manifest = load_training_state(path);
  manifest.meta["zero"]["total"] = std::int64_t{1} << 62;  // would be a 16 EiB allocation
  manifest.meta["zero"]["ranks"] = std::int64_t{1} << 40;
  save_training_state(path, manifest);
  const std::string text = test::error_text([&] { (void)load_whole_state(path, 21); });
  CHECK(text.find("'zero/total' is 4611686018427387904 floats, this model has 21") != std::string::npos);
  CHECK(text.find("'zero/ranks' is 1099511627776 (valid: 1 to 65536)") != std::string::npos);
}

TEST_CASE("a save cut short leaves the previous set the one that loads; --keep bounds the generations",
          "[zero][state]") {
  const test::TempDir dir("state-shards-generations");
  const std::string path = (dir.path / "s.state").string();
  const TrainingState first = save_four_shards(path, 7);
  // Generation 2, the save after step 9: every shard on disk, the manifest never flipped.
  (void)save_four_shards(path, 9, false);
  CHECK(dir.entries() == std::vector<std::string>{"s.state", "s.state.gen1-step7", "s.state.gen2-step9"});
  const TrainingState loaded = load_whole_state(path, 21);
  CHECK(loaded.step == 7);
  CHECK(loaded.params == first.params);
  CHECK(describe_saved(load_training_state(path)) ==
        "generation 1 (s.state.gen1-step7), the state after step 7, 4 shard(s) of a ZeRO-3 save");
  CHECK(next_generation(path) == 3);  // a half-written generation's number is never reused

  // Generation 3 complete, --keep 2: generations 3 and 1 stay, the half-written 2 goes.
  (void)save_four_shards(path, 11);
  remove_old_generations({path, 3, 11}, 2);
  CHECK(dir.entries() == std::vector<std::string>{"s.state", "s.state.gen1-step7", "s.state.gen3-step11"});
  // Generation 4: generation 1 is now beyond --keep 2, and only now, the new set complete, removed.
  const TrainingState newest = save_four_shards(path, 13);
  CHECK(dir.entries() ==
        std::vector<std::string>{"s.state", "s.state.gen1-step7", "s.state.gen3-step11", "s.state.gen4-step13"});
  remove_old_generations({path, 4, 13}, 2);
  CHECK(dir.entries() == std::vector<std::string>{"s.state", "s.state.gen3-step11", "s.state.gen4-step13"});
  CHECK(load_whole_state(path, 21).params == newest.params);
  // The older kept set resumes by its own manifest.
  CHECK(load_whole_state((dir.path / "s.state.gen3-step11" / "manifest").string(), 21).step == 11);
  remove_old_generations({path, 4, 13}, 1);
  CHECK(dir.entries() == std::vector<std::string>{"s.state", "s.state.gen4-step13"});
}

TEST_CASE("a resume of a lost manifest takes the newest complete set on disk", "[zero][state]") {
  const test::TempDir dir("state-shards-lost");
  const std::string path = (dir.path / "s.state").string();
  CHECK(resume_source(path) == path);  // nothing saved: the load says "no such file"
  (void)save_four_shards(path, 7);
  CHECK(resume_source(path) == path);
  const TrainingState second = save_four_shards(path, 9);
  (void)save_four_shards(path, 11, false);  // half-written: never taken
  std::filesystem::remove(path);
  const std::string source = resume_source(path);
  CHECK(source == (dir.path / "s.state.gen2-step9" / "manifest").string());
  const TrainingState loaded = load_whole_state(source, 21);
  CHECK(loaded.step == 9);
  CHECK(loaded.params == second.params);
}

TEST_CASE("a manifest of an older burst, its shards beside it, still loads", "[zero][state]") {
  const test::TempDir dir("state-shards-older");
  const std::string path = (dir.path / "s.state").string();
  const TrainingState whole = save_four_shards(path, 7);
  TrainingState manifest = load_training_state(path);
  for (int r = 0; r < 4; ++r) {  // F.rank<r>-of-4 beside F, as burst wrote them before sets
    const std::string beside = fmt::format("s.state.rank{}-of-4", r);
    std::filesystem::rename(shard_file(path, r), dir.path / beside);
    manifest.meta["zero"]["files"][r] = beside;
  }
  manifest.meta["zero"].erase("generation");
  save_training_state(path, manifest);
  CHECK(load_whole_state(path, 21).params == whole.params);
  CHECK(describe_saved(manifest) == "the state after step 7, 4 shard(s) of a ZeRO-3 save");
  manifest.meta["zero"]["files"] = Json::array({"s.state.rank0-of-4"});
  save_training_state(path, manifest);
  CHECK(test::error_text([&] {
          (void)load_whole_state(path, 21);
        }).find("bad ZeRO metadata: 'zero/files' is [\"s.state.rank0-of-4\"] (valid: 4 file names, one per rank)") !=
        std::string::npos);
}

TEST_CASE("a state to resume from with a NaN, an infinity or a negative second moment is refused by array and index",
          "[zero][state]") {
  const test::TempDir dir("state-shards");
  const std::string path = (dir.path / "s.state").string();
  TrainingState whole = save_four_shards(path, 7);
  const std::string plain = (dir.path / "whole.state").string();
  whole.adam_m[12] = std::numeric_limits<float>::quiet_NaN();
  whole.adam_m[20] = std::numeric_limits<float>::infinity();
  whole.params[3] = -std::numeric_limits<float>::infinity();
  save_training_state(plain, whole);
  // The file itself round-trips whatever it holds; a state to train from must be usable.
  CHECK(std::isnan(load_training_state(plain).adam_m[12]));
  CHECK(test::error_text([&] { (void)load_whole_state(plain, 21); }) ==
        plain +
            ": params[3] is -inf (valid: finite values; hint: a state saved from a diverged run cannot train; "
            "resume from an earlier save (its generation's manifest) or start afresh)\n" +
            plain +
            ": adam_m[12] is nan (2 bad values in adam_m of 21) (valid: finite values; hint: a state saved from a "
            "diverged run cannot train; resume from an earlier save (its generation's manifest) or start afresh)");
  // In a sharded save the index is the whole model's, the file the manifest.
  TrainingState shard = load_training_state(shard_file(path, 2));
  REQUIRE(!shard.adam_v.empty());
  shard.adam_v.back() = -1.0f;
  save_training_state(shard_file(path, 2), shard);
  const std::string message = test::error_text([&] { (void)load_whole_state(path, 21); });
  CHECK_THAT(message, Catch::StartsWith(path + ": adam_v["));
  CHECK_THAT(message, Catch::Contains("] is -1 (valid: finite values, at least 0;"));
}
