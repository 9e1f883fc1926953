// Fuzzes the --data reader (read_corpus) and the training sequences cut from what it accepts.
// A burst::Error is the correct answer to bad input; any other exception, a crash or a sanitizer
// report is a bug. The input becomes files in a fresh temporary directory: the first byte picks
// the layout (bit 0: one file, else a directory of files split at byte 0xFF, at most 8, every second
// one in a subdirectory; bit 1: a symlink loop back to the directory; bits 2-3: the mask; bits 4-7: the
// sequence length), the rest is the text. An accepted corpus must hold one end token per document
// and give sequences whose tokens are bytes and whose targets are bytes or kNoTarget.
#include <algorithm>
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
#include <unistd.h>

#include "common/error.hpp"
#include "common/parallelism.hpp"
#include "runtime/training/corpus.hpp"

namespace {

namespace fs = std::filesystem;

[[noreturn]] void bug(const char* what) {
  std::fprintf(stderr, "%s\n", what);
  std::abort();
}

void write_file(const fs::path& path, std::string_view text) {
  std::ofstream(path, std::ios::binary).write(text.data(), static_cast<std::streamsize>(text.size()));
}

// A directory of this process's own, removed at exit.
struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("burst-fuzz-corpus-" + std::to_string(::getpid()));
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

// The corpus path for this input, below `root` (emptied first).
fs::path lay_out(const fs::path& root, std::uint8_t layout, std::string_view text) {
  fs::remove_all(root);
  fs::create_directories(root / "sub");
  if ((layout & 1) != 0) {
    write_file(root / "data.txt", text);
    return root / "data.txt";
  }
  int index = 0;
  for (std::size_t begin = 0; begin <= text.size(); ++index) {
    const auto end = index == 7 ? text.size() : std::min(text.find('\xff', begin), text.size());
    const fs::path dir = index % 2 == 0 ? root : root / "sub";
    write_file(dir / ("doc" + std::to_string(index) + ".txt"), text.substr(begin, end - begin));
    begin = end + 1;
  }
  if ((layout & 2) != 0) {
    std::error_code ignored;
    fs::create_directory_symlink(root, root / "sub" / "loop", ignored);
  }
  return root;
}

burst::Mask mask_for(std::uint8_t layout, std::int64_t seq) {
  switch ((layout >> 2) & 3) {
    case 0: return {burst::MaskKind::Full, 0, 0};
    case 1: return {burst::MaskKind::Causal, 0, 0};
    case 2: return {burst::MaskKind::SlidingWindow, 3, 0};
    default: return {burst::MaskKind::Document, 0, seq % 2 == 0 ? 2 : 1};
  }
}

void check_accepted(const burst::rt::Corpus& corpus, std::uint8_t layout) {
  if (corpus.names.size() != corpus.starts.size() || corpus.names.empty()) bug("documents and starts disagree");
  const std::int64_t seq = 1 + (layout >> 4);
  const burst::Mask mask = mask_for(layout, seq);
  for (const std::int64_t index : {std::int64_t{0}, std::int64_t{1}, std::int64_t{1} << 40}) {
    const burst::rt::TrainingSequence s = burst::rt::training_sequence(corpus, seq, index, mask);
    if (std::ssize(s.tokens) != seq || std::ssize(s.targets) != seq) bug("a sequence of the wrong length");
    for (std::size_t i = 0; i < s.tokens.size(); ++i) {
      if (s.tokens[i] < 0 || s.tokens[i] > 255) bug("a token that is not a byte");
      if (s.targets[i] < burst::rt::kNoTarget || s.targets[i] > 255) bug("a target that is not a byte");
    }
    (void)burst::rt::counted_targets(s);
  }
  (void)burst::rt::corpus_digest(corpus);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const ScratchDir scratch;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const fs::path path = lay_out(scratch.path, data[0], text);
    check_accepted(burst::rt::read_corpus(path.string()), data[0]);
  } catch (const burst::Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
