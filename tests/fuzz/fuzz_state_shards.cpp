// Fuzzes the resume of a sharded training state end to end (load_whole_state, what
// `burst run --resume F` reads): a manifest and its shard files, laid out as a save lays them
// out, read back and reassembled against a model size. A burst::Error is the correct answer to
// bad input; any other exception, a crash or a sanitizer report is a bug (a piece whose offsets
// wrap past 2^64 wrote before the heap buffer once: seed `wrap-around`).
//
// Input: byte 0, bit 0: rewrite every file's checksum line to the right CRC-32 first (anyone can,
// so the checks behind it must hold on their own); byte 1: the model's parameter count (0-255);
// the rest: files separated by kSeparator: the first is F, the manifest (or a whole state), the
// i-th after it is written as F.gen1-step1/rank<i>-of-<n> (n files after F), where the seeds'
// manifests name them. An accepted manifest must give a whole state of exactly the model's size.
// Seeds (tests/fuzz/corpus/fuzz_state_shards): a 2-rank ZeRO-3 save of 5 floats in the layout
// above (training_state.hpp's format; `valid` loads), the crafted wrap-around, overlapping
// pieces, a shard named outside the manifest's directory, a 2^62-float total, a whole state.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <unistd.h>

#include "common/error.hpp"
#include "runtime/training/detail/state_shards.hpp"
#include "tests/fuzz/state_checksum.hpp"

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSeparator = "\n@@next-file@@\n";

[[noreturn]] void bug(const char* what) {
  std::fprintf(stderr, "%s\n", what);
  std::abort();
}

// A directory of this process's own, removed at exit.
struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("burst-fuzz-shards-" + std::to_string(::getpid()));
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

std::vector<std::string_view> split(std::string_view text) {
  std::vector<std::string_view> parts;
  for (std::size_t begin = 0;;) {
    const std::size_t end = text.find(kSeparator, begin);
    parts.push_back(text.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
    if (end == std::string_view::npos) return parts;
    begin = end + kSeparator.size();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  static const ScratchDir scratch;
  const bool fix_checksums = (data[0] & 1) != 0;
  const std::uint64_t model_size = data[1];
  const std::vector<std::string_view> files =
      split(std::string_view(reinterpret_cast<const char*>(data + 2), size - 2));
  std::error_code ignored;
  fs::remove_all(scratch.path, ignored);
  fs::create_directories(scratch.path / "F.gen1-step1");
  const std::size_t shards = files.size() - 1;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const fs::path path = i == 0 ? scratch.path / "F"
                                 : scratch.path / "F.gen1-step1" /
                                       burst::rt::shard_name(static_cast<int>(i - 1), static_cast<int>(shards));
    const std::string text = fix_checksums ? burst::fuzz::with_right_checksum(files[i]) : std::string(files[i]);
    std::ofstream(path, std::ios::binary).write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  try {
    const burst::rt::TrainingState state = burst::rt::load_whole_state((scratch.path / "F").string(), model_size);
    if (state.meta.contains("zero")) {
      if (state.params.size() != model_size) bug("accepted a manifest whose shards do not make the model's size");
      if (state.adam_m.size() != model_size || state.adam_v.size() != model_size)
        bug("accepted shards without whole moments");
    }
    for (const auto* moment : {&state.adam_m, &state.adam_v}) {
      if (!moment->empty() && moment->size() != state.params.size()) bug("accepted moments not as long as params");
    }
  } catch (const burst::Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
