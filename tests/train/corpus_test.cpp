// The byte-level corpus: reading a directory (sorted, symlinks counted once, empty files
// skipped, binary files rejected by name) and the deterministic training sequences, cyclic
// windows of the stream or, under a document mask, slots that start at real document pieces.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "runtime/training/corpus.hpp"
#include "tests/support/error_text.hpp"
#include "tests/support/temp_dir.hpp"

using namespace burst;
namespace fs = std::filesystem;

namespace {

const std::string kTestCorpus = std::string(BURST_TEST_DATA) + "/corpus";

void write_bytes(const fs::path& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The document pieces of at most `len` bytes, in order: (begin, length, end of the document's text).
struct Piece {
  std::int64_t begin, length, end;
};
std::vector<Piece> pieces_of(const rt::Corpus& corpus, std::int64_t len) {
  std::vector<Piece> pieces;
  for (std::size_t d = 0; d < corpus.starts.size(); ++d) {
    const std::int64_t end = (d + 1 < corpus.starts.size() ? corpus.starts[d + 1] : std::ssize(corpus.bytes)) - 1;
    for (std::int64_t begin = corpus.starts[d]; begin < end; begin += len) {
      pieces.push_back({begin, std::min(len, end - begin), end});
    }
  }
  return pieces;
}

}  // namespace

TEST_CASE("the test corpus reads as sorted documents, each followed by the end token", "[corpus]") {
  const rt::Corpus corpus = rt::read_corpus(kTestCorpus);
  CHECK(corpus.source == kTestCorpus);
  REQUIRE(corpus.names == std::vector<std::string>{"README.md", "alphabet.txt", "numbers.txt", "poems/rain.txt"});
  REQUIRE(corpus.starts.size() == 4);
  std::int64_t at = 0;
  for (std::size_t d = 0; d < corpus.names.size(); ++d) {
    const auto size = static_cast<std::int64_t>(fs::file_size(kTestCorpus + "/" + corpus.names[d]));
    CHECK(corpus.starts[d] == at);
    CHECK(corpus.bytes[at + size] == rt::kEndOfDocument);
    at += size + 1;
  }
  CHECK(std::ssize(corpus.bytes) == at);
  CHECK(std::count(corpus.bytes.begin(), corpus.bytes.end(), rt::kEndOfDocument) == 4);
  const std::string alphabet(corpus.bytes.begin() + corpus.starts[1], corpus.bytes.begin() + corpus.starts[2] - 1);
  CHECK(alphabet == "abcdefghijklmnopqrstuvwxyz\n");
}

TEST_CASE("a file reached through symlinks counts once, under its real name; empty files are skipped", "[corpus]") {
  const test::TempDir dir("corpus-test");
  write_bytes(dir.path / "a.txt", "alpha\n");
  write_bytes(dir.path / "b.txt", "beta\n");
  write_bytes(dir.path / "empty.txt", "");
  fs::create_symlink(dir.path / "b.txt", dir.path / "0-link-to-b.txt");  // sorts first, yet b.txt names it
  fs::create_directory_symlink(dir.path, dir.path / "loop");             // a cycle: loop/a.txt, loop/loop/...
  fs::create_directory(dir.path / "sub");
  fs::create_symlink(dir.path / "a.txt", dir.path / "sub" / "link-to-a.txt");
  const rt::Corpus corpus = rt::read_corpus(dir.path.string());
  CHECK(corpus.names == std::vector<std::string>{"a.txt", "b.txt"});
  CHECK(corpus.bytes.size() == 6 + 1 + 5 + 1);
}

TEST_CASE("a single file is one document", "[corpus]") {
  const rt::Corpus corpus = rt::read_corpus(kTestCorpus + "/numbers.txt");
  CHECK(corpus.names == std::vector<std::string>{"numbers.txt"});
  CHECK(corpus.starts == std::vector<std::int64_t>{0});
  CHECK(corpus.bytes.size() == fs::file_size(kTestCorpus + "/numbers.txt") + 1);
}

TEST_CASE("binary files are rejected, each named with its first NUL", "[corpus]") {
  const test::TempDir dir("corpus-test");
  write_bytes(dir.path / "good.txt", "text\n");
  write_bytes(dir.path / "bad.bin", std::string("ab\0c", 4));
  write_bytes(dir.path / "worse.bin", std::string("\0", 1));
  const std::string text = test::error_text([&] { (void)rt::read_corpus(dir.path.string()); });
  CHECK(contains(text, (dir.path / "bad.bin").string() + ": binary file: byte 2 is NUL (hint: --data wants text)"));
  CHECK(contains(text, (dir.path / "worse.bin").string() + ": binary file: byte 0 is NUL"));
}

TEST_CASE("binary files without a NUL are told apart from text by their control characters", "[corpus]") {
  const test::TempDir dir("corpus-test");
  std::string text(2000, 'a'), tabs = "a\tb\r\nc\f\n";
  text[500] = '\x01';  // 1 control character in 2000 bytes: text (a stray escape)
  write_bytes(dir.path / "text.txt", text + tabs);
  std::string binary(2000, 'a');
  binary[10] = '\x02';
  binary[20] = '\x1b';
  binary[30] = '\x7f';  // 3 in 2000: more than 1 in 1000
  write_bytes(dir.path / "image.bin", binary);
  const std::string message = test::error_text([&] { (void)rt::read_corpus(dir.path.string()); });
  CHECK(contains(message, (dir.path / "image.bin").string() +
                              ": binary file: 3 of its 2000 bytes are control characters (the first at byte 10)"));
  CHECK_FALSE(contains(message, "text.txt"));
}

TEST_CASE("a missing path or a corpus without text is an error naming the path", "[corpus]") {
  const test::TempDir dir("corpus-test");
  const std::string missing = (dir.path / "nothing-here").string();
  CHECK(test::error_text([&] {
          (void)rt::read_corpus(missing);
        }).starts_with(missing + ": no such file or directory (hint: --data wants"));
  write_bytes(dir.path / "empty.txt", "");
  CHECK(test::error_text([&] {
          (void)rt::read_corpus(dir.path.string());
        }).starts_with(dir.path.string() + ": no non-empty file below it"));
  CHECK(test::error_text([&] {
          (void)rt::read_corpus((dir.path / "empty.txt").string());
        }).starts_with((dir.path / "empty.txt").string() + ": the file is empty"));
}

TEST_CASE("a --data file over the corpus cap, a device or a symlink loop is refused before it is read", "[corpus]") {
  const test::TempDir dir("corpus-cap");
  // A 6 GB sparse file: refused by its size at once, not read (it took 61 s and 12.5 GB).
  const fs::path big = dir.path / "huge.txt";
  std::ofstream(big).close();
  fs::resize_file(big, std::uintmax_t{6} << 30);
  CHECK(test::error_text([&] { (void)rt::read_corpus(big.string()); })
            .find(big.string() + ": 6GiB of a --data corpus (every rank holds it whole) (valid: a --data corpus (every "
                                 "rank holds it whole) of at most 1GiB") != std::string::npos);
  CHECK(test::error_text([&] {
          (void)rt::read_corpus("/dev/zero");
        }).starts_with("/dev/zero: neither a regular file nor a directory"));
  fs::create_symlink(dir.path / "b", dir.path / "a");
  fs::create_symlink(dir.path / "a", dir.path / "b");
  const std::string loop = (dir.path / "a").string();
  CHECK(test::error_text([&] {
          (void)rt::read_corpus(loop);
        }).starts_with(loop + ": cannot read it: Too many levels of symbolic links"));
}

TEST_CASE("without a document mask, consecutive sequences are consecutive cyclic windows", "[corpus]") {
  const rt::Corpus corpus = rt::read_corpus(kTestCorpus);
  const std::int64_t seq = 64, size = std::ssize(corpus.bytes);
  for (const Mask mask : {Mask{MaskKind::Causal}, Mask{MaskKind::Full}, Mask{MaskKind::SlidingWindow, 8}}) {
    for (std::int64_t index = 0; index < 2 * size / seq + 2; ++index) {  // wraps around the stream twice
      const rt::TrainingSequence s = rt::training_sequence(corpus, seq, index, mask);
      const rt::TrainingSequence next = rt::training_sequence(corpus, seq, index + 1, mask);
      REQUIRE(std::ssize(s.tokens) == seq);
      REQUIRE(std::ssize(s.targets) == seq);
      for (std::int64_t i = 0; i < seq; ++i) CHECK(s.tokens[i] == corpus.bytes[(index * seq + i) % size]);
      for (std::int64_t i = 0; i + 1 < seq; ++i) CHECK(s.targets[i] == s.tokens[i + 1]);
      CHECK(s.targets[seq - 1] == next.tokens[0]);
      CHECK(rt::counted_targets(s) == seq);
    }
  }
}

TEST_CASE("under a document mask every slot starts a document piece and no target crosses a document end", "[corpus]") {
  const rt::Corpus corpus = rt::read_corpus(kTestCorpus);
  const std::int64_t len = 16, seq = 64, slots = seq / len;
  const std::vector<Piece> pieces = pieces_of(corpus, len);
  const auto count = static_cast<std::int64_t>(pieces.size());
  std::set<std::int64_t> starts_seen;
  for (std::int64_t index = 0; index <= count / slots; ++index) {  // every piece at least once
    const rt::TrainingSequence s = rt::training_sequence(corpus, seq, index, Mask{MaskKind::Document, 0, len});
    REQUIRE(std::ssize(s.tokens) == seq);
    std::int64_t counted = 0;
    for (std::int64_t j = 0; j < slots; ++j) {
      const Piece& piece = pieces[(index * slots + j) % count];
      starts_seen.insert(piece.begin);
      for (std::int64_t i = 0; i < len; ++i) {
        const std::int32_t token = s.tokens[j * len + i], target = s.targets[j * len + i];
        if (i >= piece.length) {  // padding
          CHECK(token == rt::kEndOfDocument);
          CHECK(target == rt::kNoTarget);
          continue;
        }
        CHECK(token == corpus.bytes[piece.begin + i]);
        CHECK(target != rt::kEndOfDocument);
        CHECK(target == (piece.begin + i + 1 < piece.end ? corpus.bytes[piece.begin + i + 1] : rt::kNoTarget));
        counted += target != rt::kNoTarget;
      }
    }
    CHECK(rt::counted_targets(s) == counted);
  }
  CHECK(std::ssize(starts_seen) == count);
  for (std::size_t d = 0; d < corpus.starts.size(); ++d) CHECK(starts_seen.count(corpus.starts[d]) == 1);
}

TEST_CASE("bad sequence arguments are errors", "[corpus]") {
  const rt::Corpus corpus = rt::read_corpus(kTestCorpus);
  CHECK(test::error_text([&] {
          (void)rt::training_sequence(corpus, 60, 0, Mask{MaskKind::Document, 0, 16});
        }) ==
        "training_sequence: seq: 60 tokens is not a whole number of 16-token documents (valid: a multiple of "
        "doc_len; hint: each sequence is seq / doc_len document slots)");
  CHECK(test::error_text([&] { (void)rt::training_sequence(corpus, 0, 0, Mask{}); }) ==
        "training_sequence: seq: 0 tokens (valid: seq >= 1)");
  CHECK(test::error_text([&] {
          (void)rt::training_sequence(rt::Corpus{}, 8, 0, Mask{});
        }).starts_with("training_sequence: corpus: '' holds no text"));
}

TEST_CASE("text shorter than one sequence read as a stream is named in a warning; slotted documents are not",
          "[corpus]") {
  const rt::Corpus corpus = rt::read_corpus(kTestCorpus);
  const auto size = static_cast<std::int64_t>(corpus.bytes.size());
  CHECK(rt::repetition_warning(corpus, size, Mask{MaskKind::Causal}).empty());
  const std::string warning = rt::repetition_warning(corpus, 4 * size, Mask{MaskKind::Causal});
  CHECK(contains(warning, "fewer than one " + std::to_string(4 * size) + "-token sequence"));
  CHECK(contains(warning, "repeats the text 4.0 times"));
  CHECK(contains(warning, kTestCorpus));
  CHECK(rt::repetition_warning(corpus, 4 * size, Mask{MaskKind::Document, 0, 64}).empty());
}

TEST_CASE("bytes 0x80-0xFF are tokens 128-255; documents that are not UTF-8 are named in a note", "[corpus]") {
  const test::TempDir dir("corpus-test");
  write_bytes(dir.path / "a-utf8.txt", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n");  // é, €, an emoji
  const rt::Corpus utf8 = rt::read_corpus(dir.path.string());
  CHECK(rt::encoding_note(utf8).empty());
  write_bytes(dir.path / "b-latin1.txt", "caf\xe9\n");  // é in Latin-1
  write_bytes(dir.path / "c-high.txt", std::string("\x80\x81\xfe\xff"));
  const rt::Corpus mixed = rt::read_corpus(dir.path.string());
  REQUIRE(mixed.names == std::vector<std::string>{"a-utf8.txt", "b-latin1.txt", "c-high.txt"});
  // Every byte is its own token, in UTF-8 text and out of it.
  CHECK(mixed.bytes[3] == 0xc3);
  CHECK(mixed.bytes[static_cast<std::size_t>(mixed.starts[1]) + 3] == 0xe9);
  const rt::TrainingSequence sequence =
      rt::training_sequence(mixed, std::ssize(mixed.bytes), 0, Mask{MaskKind::Causal});
  CHECK(std::count(sequence.tokens.begin(), sequence.tokens.end(), 0xff) == 1);
  CHECK(*std::max_element(sequence.tokens.begin(), sequence.tokens.end()) == 255);
  CHECK(
      rt::encoding_note(mixed) ==
      "--data: 2 of 3 document(s) are not UTF-8 (the first, 'b-latin1.txt', at byte 3: 0xe9); they train as they are, "
      "every byte a token (0x80-0xFF are tokens 128-255, as in UTF-8 text)");
  // Overlong forms, surrogates and truncated sequences are not UTF-8 either.
  struct Bad {
    std::string text;
    std::size_t at;  // the first byte that is not UTF-8
  };
  for (const Bad& bad :
       {Bad{"ok \xc0\xaf", 3}, Bad{"ok \xed\xa0\x80", 3}, Bad{"ok ab\xe2\x82", 5}, Bad{"ok \xf4\x90\x80\x80", 3}}) {
    write_bytes(dir.path / "b-latin1.txt", bad.text);
    CHECK(
        rt::encoding_note(rt::read_corpus((dir.path / "b-latin1.txt").string())) ==
        fmt::format("--data: 1 of 1 document(s) are not UTF-8 (the first, 'b-latin1.txt', at byte {}: 0x{:02x}); they "
                    "train as they are, every byte a token (0x80-0xFF are tokens 128-255, as in UTF-8 text)",
                    bad.at, static_cast<unsigned char>(bad.text[bad.at])));
  }
}
