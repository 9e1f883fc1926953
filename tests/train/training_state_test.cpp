// The training-state file: a bit-exact round trip, and every way a file can be damaged
// (truncated, a flipped byte, a header field edited by hand, a wrong or older magic, empty, a
// bad header or checksum line) fails with the path and the problem; saving is atomic, replaces
// an old file, leaves no temporary behind and clears those of saves that died.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include <sys/wait.h>
#include <unistd.h>

#include "runtime/training/training_state.hpp"
#include "tests/support/error_text.hpp"
#include "tests/support/temp_dir.hpp"

using namespace burst;
namespace fs = std::filesystem;

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::vector<float> random_floats(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0F, 3.0F);
  std::vector<float> values(n);
  for (float& v : values) v = normal(rng);
  return values;
}

std::vector<std::uint32_t> bits(const std::vector<float>& values) {
  std::vector<std::uint32_t> out;
  for (const float v : values) out.push_back(std::bit_cast<std::uint32_t>(v));
  return out;
}

rt::TrainingState sample_state() {
  rt::TrainingState state;
  state.meta = Json{{"model", {{"d_model", 64}, {"layers", 2}}},
                    {"strategy", "burst"},
                    {"data", "/usr/share/common-licenses"},
                    {"lr", 0.1}};
  state.step = 17;
  state.adam_step = 17;
  state.params = random_floats(1000, 1);
  state.params[0] = -0.0F;
  state.params[1] = std::numeric_limits<float>::denorm_min();
  state.params[2] = std::numeric_limits<float>::max();
  state.params[3] = -std::numeric_limits<float>::infinity();
  state.adam_m = random_floats(1000, 2);
  state.adam_v = random_floats(1000, 3);
  return state;
}

// The message loading `path` fails with.
std::string load_error(const std::string& path) {
  return test::error_text([&] { (void)rt::load_training_state(path); });
}

}  // namespace

TEST_CASE("a training state round-trips bit-exactly", "[training_state]") {
  const test::TempDir dir("state-test");
  const std::string path = (dir.path / "state.bin").string();
  const rt::TrainingState saved = sample_state();
  rt::save_training_state(path, saved);
  const rt::TrainingState loaded = rt::load_training_state(path);
  CHECK(loaded.meta == saved.meta);
  CHECK(loaded.meta.dump() == saved.meta.dump());
  CHECK(loaded.step == 17);
  CHECK(loaded.adam_step == 17);
  CHECK(bits(loaded.params) == bits(saved.params));
  CHECK(bits(loaded.adam_m) == bits(saved.adam_m));
  CHECK(bits(loaded.adam_v) == bits(saved.adam_v));
  const std::string bytes = read_bytes(path);
  CHECK(bytes.starts_with("burst.training_state/2\n{\"meta\":"));
  const std::size_t checksum_line = bytes.find('\n', bytes.find('\n') + 1) + 1;
  CHECK(bytes.substr(checksum_line, 6) == "crc32 ");
  CHECK(bytes[checksum_line + 14] == '\n');
}

TEST_CASE("a state before the first step has empty moments", "[training_state]") {
  const test::TempDir dir("state-test");
  const std::string path = (dir.path / "state.bin").string();
  rt::TrainingState saved;
  saved.params = random_floats(10, 4);
  rt::save_training_state(path, saved);
  const rt::TrainingState loaded = rt::load_training_state(path);
  CHECK(loaded.meta.is_null());
  CHECK(bits(loaded.params) == bits(saved.params));
  CHECK(loaded.adam_m.empty());
  CHECK(loaded.adam_v.empty());
}

TEST_CASE("a damaged training state never loads, and the error names the path and the problem", "[training_state]") {
  const test::TempDir dir("state-test");
  const std::string path = (dir.path / "state.bin").string();
  rt::save_training_state(path, sample_state());
  const std::string good = read_bytes(path);
  const std::size_t body = 4 * 3000;

  write_bytes(path, good.substr(0, good.size() - 1));
  CHECK(load_error(path) == path + ": truncated: " + std::to_string(body - 1) + " bytes of " + std::to_string(body) +
                                " (hint: the file was cut short; resume from another copy)");

  std::string flipped = good;
  flipped[good.size() - 100] = static_cast<char>(flipped[good.size() - 100] ^ 0x10);
  write_bytes(path, flipped);
  CHECK(load_error(path).starts_with(path + ": corrupt: checksum "));

  write_bytes(path, good + "x");
  CHECK(load_error(path) ==
        path + ": too long: " + std::to_string(body + 1) + " body bytes, the header says " + std::to_string(body));

  write_bytes(path, "burst.plan/1\n" + good.substr(good.find('\n') + 1));
  CHECK(load_error(path) == path +
                                ": not a training state: it does not start with 'burst.training_state/2' (hint: give "
                                "a file written by save_training_state)");

  write_bytes(path, "");
  CHECK(load_error(path).starts_with(path + ": not a training state: the file is empty"));

  write_bytes(path, "burst.training_state/2\n{\"meta\": nul\n");
  CHECK(load_error(path) == path + ": bad header: the second line is not a JSON object");

  write_bytes(path,
              "burst.training_state/2\n{\"meta\":{},\"step\":-1,\"adam_step\":0,\"params\":2,\"adam_m\":1,"
              "\"adam_v\":2}\n");
  const std::string header_errors = load_error(path);
  CHECK(header_errors.find(path + ": bad header: 'step' is -1") != std::string::npos);
  CHECK(header_errors.find(path + ": bad header: adam_m holds 1 floats but params holds 2 (valid: 0 or 2)") !=
        std::string::npos);

  fs::remove(path);
  CHECK(load_error(path) == path + ": no such file (hint: check the path)");
}

TEST_CASE("a header nested deeper than the JSON depth limit is refused, not copied (found by fuzz_training_state)",
          "[training_state]") {
  // 200000 levels of `meta` overflowed the stack when the header was copied; now the header
  // line goes through parse_json_text's depth limit like every other JSON burst reads.
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  const std::string text = "burst.training_state/2\n{\"meta\":" + deep +
                           ",\"step\":0,\"adam_step\":0,\"params\":0,\"adam_m\":0,\"adam_v\":0}\ncrc32 00000000\n";
  CHECK(test::error_text([&] { (void)rt::parse_training_state(text, "deep.state"); }) ==
        "deep.state: bad header: the second line is not a JSON object");
}

TEST_CASE("saving checks the moments, names a missing directory, and replaces an old file atomically",
          "[training_state]") {
  const test::TempDir dir("state-test");
  const std::string path = (dir.path / "state.bin").string();

  rt::TrainingState mismatched = sample_state();
  mismatched.adam_v.pop_back();
  CHECK(test::error_text([&] { rt::save_training_state(path, mismatched); }) ==
        path + ": cannot save the training state: adam_v holds 999 floats but params holds 1000 (valid: 0 or 1000)");

  const std::string missing = (dir.path / "no-such-dir" / "state.bin").string();
  CHECK(test::error_text([&] {
          rt::save_training_state(missing, sample_state());
        }).starts_with(missing + ": cannot write the training state: directory"));

  write_bytes(path, "an old file that is not a training state");
  rt::save_training_state(path, sample_state());
  CHECK(rt::load_training_state(path).step == 17);
  rt::TrainingState second = sample_state();
  second.step = 18;
  second.params = random_floats(10, 5);
  second.adam_m.clear();
  second.adam_v.clear();
  rt::save_training_state(path, second);
  const rt::TrainingState loaded = rt::load_training_state(path);
  CHECK(loaded.step == 18);
  CHECK(bits(loaded.params) == bits(second.params));
  CHECK(read_bytes(path).find("an old file") == std::string::npos);
  CHECK(dir.entries() == std::vector<std::string>{"state.bin"});  // no temporary left behind
}

TEST_CASE("the checksum covers the header: a field edited by hand, an older format or a bad checksum line never loads",
          "[training_state]") {
  const test::TempDir dir("state-test");
  const std::string path = (dir.path / "state.bin").string();
  rt::save_training_state(path, sample_state());
  const std::string good = read_bytes(path);

  std::string edited = good;  // step 17 -> 18: the same length, still valid JSON
  const std::size_t step = edited.find("\"step\":17,");
  REQUIRE(step != std::string::npos);
  edited[step + 8] = '8';
  write_bytes(path, edited);
  CHECK(load_error(path).starts_with(path + ": corrupt: checksum "));
  CHECK(load_error(path).find("of the header and body") != std::string::npos);

  write_bytes(path, "burst.training_state/1\n" + good.substr(good.find('\n') + 1));
  CHECK(load_error(path) == path +
                                ": written by an older burst: format burst.training_state/1, whose checksum leaves the "
                                "header unchecked; this burst reads burst.training_state/2 (hint: resume it with the "
                                "burst that saved it, or start a new run and --save again)");

  std::string bad_line = good;
  bad_line[bad_line.find("crc32 ") + 6] = 'g';
  write_bytes(path, bad_line);
  CHECK(load_error(path).starts_with(path + ": bad checksum line: the third line is not 'crc32' and 8 hex digits"));
}

TEST_CASE("a save removes the temporaries of saves whose process died, and keeps those of live ones",
          "[training_state]") {
  const test::TempDir dir("state-test");
  const std::string path = (dir.path / "state.bin").string();
  const pid_t child = ::fork();  // a pid that is certainly gone: a child that exited and was reaped
  if (child == 0) ::_exit(0);
  REQUIRE(child > 0);
  REQUIRE(::waitpid(child, nullptr, 0) == child);
  const std::string dead = path + ".tmp." + std::to_string(child);  // as older saves named it
  const std::string dead_tagged = dead + ".0123456789abcdef";       // as saves name it now
  const std::string live = path + ".tmp." + std::to_string(::getppid()) + ".fedcba9876543210";
  write_bytes(dead, "half of a state");
  write_bytes(dead_tagged, "half of another state");
  write_bytes(live, "a save in flight");
  rt::save_training_state(path, sample_state());
  CHECK(rt::load_training_state(path).step == 17);
  CHECK(!fs::exists(dead));
  CHECK(!fs::exists(dead_tagged));
  CHECK(dir.entries() == std::vector<std::string>{"state.bin", fs::path(live).filename().string()});
}
