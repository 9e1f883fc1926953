// Byte-level corpus and deterministic training sequences (see corpus.hpp).
#include "runtime/training/corpus.hpp"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <optional>
#include <set>
#include <span>
#include <system_error>
#include <tuple>

#include <boost/crc.hpp>
#include <fmt/format.h>

#include "common/error.hpp"
#include "common/untrusted_file.hpp"

namespace burst::rt {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDataHint = "--data wants a text file or a directory of text files";

// A regular file found below the corpus directory.
struct Found {
  std::string name;  // relative to the directory, '/'-separated
  fs::path path;
  fs::path canonical;
  bool direct = false;  // reached without passing a symlink: `name` is the file's real name
};

// A corpus directory holding more entries or bytes than this is not a corpus (a symlink to "/",
// say: /proc/self/root; a build tree): the walk stops with an error instead of reading the whole
// machine. Every rank holds the whole corpus in memory.
constexpr std::int64_t kMaxCorpusEntries = 100000;
constexpr std::uintmax_t kMaxCorpusBytes = std::uintmax_t{1} << 30;

// Every regular file below `root`, symlinks followed; a directory reached twice (a symlink to
// an ancestor, say) is entered once, so a symlink loop cannot recurse forever.
std::vector<Found> files_below(const fs::path& root, Problems& problems) {
  std::vector<Found> found;
  std::error_code ec;
  const fs::path real_root = fs::canonical(root, ec);
  std::set<fs::path> entered{real_root};
  fs::recursive_directory_iterator it(root, fs::directory_options::follow_directory_symlink, ec);
  std::int64_t entries = 0;
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (++entries > kMaxCorpusEntries) {
      problems.add(root.string(), fmt::format("more than {} entries below it", kMaxCorpusEntries),
                   "a directory of text files", "point --data at the corpus itself (symlinks are followed)");
      return {};
    }
    const fs::path& path = it->path();
    std::error_code ignored;  // a broken symlink is neither a directory nor a file: skipped
    if (fs::is_directory(path, ignored)) {
      if (!entered.insert(fs::canonical(path, ignored)).second) it.disable_recursion_pending();
    } else if (fs::is_regular_file(path, ignored)) {
      const fs::path relative = path.lexically_relative(root);
      const fs::path canonical = fs::canonical(path, ignored);
      found.push_back({relative.generic_string(), path, canonical, canonical == real_root / relative});
    }
  }
  if (ec) problems.add(root.string(), fmt::format("cannot list the directory: {}", ec.message()));
  return found;
}

// Each distinct file (canonical path) once, under its real name if it was reached directly
// (GPL-3, not the symlink GPL), else under its first name; sorted by name.
std::vector<Found> distinct_sorted(std::vector<Found> found) {
  const auto key = [](const Found& f) {
    return std::tuple<const fs::path&, bool, const std::string&>(f.canonical, !f.direct, f.name);
  };
  std::sort(found.begin(), found.end(), [&](const Found& a, const Found& b) { return key(a) < key(b); });
  found.erase(std::unique(found.begin(), found.end(),
                          [](const Found& a, const Found& b) { return a.canonical == b.canonical; }),
              found.end());
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.name < b.name; });
  return found;
}

// Whether a byte is a control character that text does not hold (everything below 0x20 but tab,
// newline, vertical tab, form feed and carriage return; and DEL). NUL is one of them.
bool binary_byte(unsigned char c) { return (c < 0x20 && (c < '\t' || c > '\r')) || c == 0x7F; }

// The file's text, or nullopt with a problem when it cannot be read (read_untrusted_file: a
// regular file of at most `budget` bytes) or is not text: it holds a NUL (which marks documents
// here), or more than 1 byte in 1000 is a control character text does not use (images, archives
// and executables are full of them; UTF-8 text has none).
std::optional<std::string> read_text(const fs::path& path, std::uintmax_t budget, Problems& problems) {
  std::string text;
  try {
    text = read_untrusted_file(path.string(), FileCap{"a --data corpus (every rank holds it whole)", budget});
  } catch (const Error& e) {
    for (const Problem& problem : e.problems()) problems.add(problem);
    return std::nullopt;
  }
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    problems.add(path.string(), fmt::format("binary file: byte {} is NUL", nul), "", "--data wants text");
    return std::nullopt;
  }
  const auto control =
      std::count_if(text.begin(), text.end(), [](char c) { return binary_byte(static_cast<unsigned char>(c)); });
  if (control * 1000 > std::ssize(text)) {
    const auto first =
        std::find_if(text.begin(), text.end(), [](char c) { return binary_byte(static_cast<unsigned char>(c)); });
    problems.add(path.string(),
                 fmt::format("binary file: {} of its {} bytes are control characters (the first at byte {})", control,
                             text.size(), first - text.begin()),
                 "text: at most 1 control character in 1000 bytes besides tab, newline and carriage return",
                 "--data wants text");
    return std::nullopt;
  }
  return text;
}

// The offset of the first byte that is not part of a well-formed UTF-8 sequence (Unicode's
// table 3-7: no overlong forms, no surrogates, nothing past U+10FFFF), or npos.
std::size_t first_non_utf8(std::span<const std::uint8_t> text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const std::uint8_t c = text[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    std::uint8_t low = 0x80, high = 0xBF;  // the second byte's range
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) low = 0xA0;
      if (c == 0xED) high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) low = 0x90;
      if (c == 0xF4) high = 0x8F;
    } else {
      return i;
    }
    if (i + length > text.size() || text[i + 1] < low || text[i + 1] > high) return i;
    for (std::size_t k = 2; k < length; ++k) {
      if (text[i + k] < 0x80 || text[i + k] > 0xBF) return i;
    }
    i += length;
  }
  return std::string::npos;
}

void add_document(Corpus& corpus, std::string name, const std::string& text) {
  corpus.names.push_back(std::move(name));
  corpus.starts.push_back(std::ssize(corpus.bytes));
  corpus.bytes.insert(corpus.bytes.end(), text.begin(), text.end());
  corpus.bytes.push_back(static_cast<std::uint8_t>(kEndOfDocument));
}

// Where document d's text ends (its end token's offset).
std::int64_t document_end(const Corpus& corpus, std::size_t d) {
  return (d + 1 < corpus.starts.size() ? corpus.starts[d + 1] : std::ssize(corpus.bytes)) - 1;
}

void check_arguments(const Corpus& corpus, std::int64_t seq, std::int64_t index, const Mask& mask) {
  Problems problems;
  if (seq <= 0) problems.add("training_sequence: seq", fmt::format("{} tokens", seq), "seq >= 1");
  if (index < 0) problems.add("training_sequence: index", fmt::format("sequence {}", index), "index >= 0");
  if (corpus.bytes.size() == corpus.starts.size()) {
    problems.add("training_sequence: corpus", fmt::format("'{}' holds no text", corpus.source), "",
                 "read it with read_corpus");
  }
  if (mask.kind == MaskKind::Document && mask.doc_len <= 0) {
    problems.add("training_sequence: mask", fmt::format("documents of {} tokens", mask.doc_len), "doc_len >= 1");
  } else if (mask.kind == MaskKind::Document && seq > 0 && seq % mask.doc_len != 0) {
    problems.add("training_sequence: seq",
                 fmt::format("{} tokens is not a whole number of {}-token documents", seq, mask.doc_len),
                 "a multiple of doc_len", "each sequence is seq / doc_len document slots");
  }
  problems.throw_if_any();
}

// The stream of all documents read cyclically from (index * seq) mod size.
TrainingSequence stream_window(const Corpus& corpus, std::int64_t seq, std::int64_t index) {
  const std::int64_t size = std::ssize(corpus.bytes);
  const std::int64_t offset = (index % size) * (seq % size) % size;
  TrainingSequence sequence{std::vector<std::int32_t>(seq), std::vector<std::int32_t>(seq)};
  for (std::int64_t i = 0; i < seq; ++i) {
    sequence.tokens[i] = corpus.bytes[(offset + i) % size];
    sequence.targets[i] = corpus.bytes[(offset + i + 1) % size];
  }
  return sequence;
}

// Bytes [begin, begin + length) of a document whose text ends at `end`.
struct Piece {
  std::int64_t begin = 0;
  std::int64_t length = 0;
  std::int64_t end = 0;
};

// first[d]: the number of pieces of at most `len` bytes in the documents before d; first.back()
// is the total.
std::vector<std::int64_t> first_pieces(const Corpus& corpus, std::int64_t len) {
  std::vector<std::int64_t> first{0};
  for (std::size_t d = 0; d < corpus.starts.size(); ++d) {
    const std::int64_t text = document_end(corpus, d) - corpus.starts[d];
    first.push_back(first.back() + (text + len - 1) / len);
  }
  return first;
}

Piece piece_at(const Corpus& corpus, const std::vector<std::int64_t>& first, std::int64_t len, std::int64_t p) {
  const auto d = static_cast<std::size_t>(std::upper_bound(first.begin(), first.end(), p) - first.begin() - 1);
  const std::int64_t begin = corpus.starts[d] + (p - first[d]) * len;
  const std::int64_t end = document_end(corpus, d);
  return {begin, std::min(len, end - begin), end};
}

// seq / doc_len slots, each filled from the start of a document piece and padded.
TrainingSequence document_slots(const Corpus& corpus, std::int64_t seq, std::int64_t index, std::int64_t len) {
  const std::vector<std::int64_t> first = first_pieces(corpus, len);
  const std::int64_t pieces = first.back();
  const std::int64_t slots = seq / len;
  TrainingSequence sequence{std::vector<std::int32_t>(seq, kEndOfDocument), std::vector<std::int32_t>(seq, kNoTarget)};
  for (std::int64_t j = 0; j < slots; ++j) {
    const Piece piece = piece_at(corpus, first, len, ((index % pieces) * (slots % pieces) + j) % pieces);
    for (std::int64_t i = 0; i < piece.length; ++i) {
      const std::int64_t at = piece.begin + i;
      sequence.tokens[j * len + i] = corpus.bytes[at];
      if (at + 1 < piece.end) sequence.targets[j * len + i] = corpus.bytes[at + 1];
    }
  }
  return sequence;
}

}  // namespace

Corpus read_corpus(const std::string& path) {
  const fs::path root(path);
  std::error_code ec;
  const fs::file_status status = fs::status(root, ec);
  if (status.type() == fs::file_type::not_found) throw Error(Problem{path, "no such file or directory", "", kDataHint});
  if (ec)
    throw Error(Problem{path, fmt::format("cannot read it: {}", ec.message()), "", kDataHint});  // a symlink loop, say
  Problems problems;
  Corpus corpus{path, {}, {}, {}};
  if (fs::is_directory(root, ec)) {
    std::uintmax_t total = 0;
    for (const Found& file : distinct_sorted(files_below(root, problems))) {
      const std::uintmax_t budget = kMaxCorpusBytes - total;  // what the files so far leave
      std::error_code size_error;
      const std::uintmax_t size = fs::file_size(file.path, size_error);
      if (!size_error && size > budget) {
        problems.add(path, fmt::format("more than {} MiB of files below it (at {})", kMaxCorpusBytes >> 20, file.name),
                     "a corpus every rank can hold in memory", "point --data at the corpus itself");
        break;
      }
      const auto text = read_text(file.path, budget, problems);
      if (text) total += text->size();
      if (text && !text->empty()) add_document(corpus, file.name, *text);
    }
  } else if (fs::is_regular_file(root, ec)) {
    const auto text = read_text(root, kMaxCorpusBytes, problems);
    if (text && !text->empty()) add_document(corpus, root.filename().string(), *text);
  } else {
    problems.add(path, "neither a regular file nor a directory", "", kDataHint);
  }
  if (problems.empty() && corpus.names.empty()) {
    problems.add(path, fs::is_directory(root, ec) ? "no non-empty file below it" : "the file is empty", "", kDataHint);
  }
  problems.throw_if_any();
  return corpus;
}

TrainingSequence training_sequence(const Corpus& corpus, std::int64_t seq, std::int64_t index, const Mask& mask) {
  check_arguments(corpus, seq, index, mask);
  if (mask.kind == MaskKind::Document) return document_slots(corpus, seq, index, mask.doc_len);
  return stream_window(corpus, seq, index);
}

std::string repetition_warning(const Corpus& corpus, std::int64_t seq, const Mask& mask) {
  const auto size = static_cast<std::int64_t>(corpus.bytes.size());
  if (mask.kind == MaskKind::Document || size == 0 || size >= seq) return {};
  return fmt::format(
      "--data: '{}' holds {} bytes in {} document(s), fewer than one {}-token sequence: each sequence "
      "repeats the text {:.1f} times; use more text (a directory of files) for a meaningful loss",
      corpus.source, size, corpus.names.size(), seq, static_cast<double>(seq) / static_cast<double>(size));
}

std::string encoding_note(const Corpus& corpus) {
  std::size_t documents = 0, first_document = 0, first_byte = 0;
  for (std::size_t d = 0; d < corpus.starts.size(); ++d) {
    const auto begin = static_cast<std::size_t>(corpus.starts[d]);
    const auto end = static_cast<std::size_t>(document_end(corpus, d));
    const std::size_t at = first_non_utf8(std::span(corpus.bytes).subspan(begin, end - begin));
    if (at == std::string::npos) continue;
    if (documents++ == 0) {
      first_document = d;
      first_byte = at;
    }
  }
  if (documents == 0) return {};
  const std::uint8_t value = corpus.bytes[static_cast<std::size_t>(corpus.starts[first_document]) + first_byte];
  return fmt::format(
      "--data: {} of {} document(s) are not UTF-8 (the first, '{}', at byte {}: 0x{:02x}); they train as "
      "they are, every byte a token (0x80-0xFF are tokens 128-255, as in UTF-8 text)",
      documents, corpus.names.size(), corpus.names[first_document], first_byte, value);
}

std::int64_t counted_targets(const TrainingSequence& sequence) {
  return std::ranges::count_if(sequence.targets, [](std::int32_t t) { return t != kNoTarget; });
}

std::int64_t counted_targets(std::span<const TrainingSequence> batch) {
  std::int64_t counted = 0;
  for (const TrainingSequence& sequence : batch) counted += counted_targets(sequence);
  return counted;
}

std::uint32_t corpus_digest(const Corpus& corpus) {
  boost::crc_32_type crc;
  crc.process_bytes(corpus.bytes.data(), corpus.bytes.size());
  return crc.checksum();
}

}  // namespace burst::rt
