// Real text to train on, tokenised at byte level and cut into training sequences.
//
// Byte-level tokens need no vocabulary file: token t is the byte t (vocab 256). Byte 0 never
// occurs in text, so it marks the end of a document. Every other byte is a token as it is: a
// UTF-8 character of two to four bytes is two to four tokens of 0x80-0xFF, and a file in another
// encoding (Latin-1, say) trains on its bytes too; encoding_note says so, naming the first
// document that is not UTF-8, so that is never a surprise. A corpus is a file, or every regular file
// below a directory (symlinks followed, each distinct file once and under its real name rather
// than a symlink's, sorted by relative path); the default is the licence texts every Debian
// machine ships in /usr/share/common-licenses.
//
// Sequence `index` (the training step) is a pure function of the corpus, so a resumed run sees
// exactly the data it would have seen:
// - full, causal, sliding masks: the stream of all documents back to back, each followed by
//   its end token, read cyclically; sequence i is the window at (i * seq) mod size and every
//   target is the stream's next byte.
// - document mask with doc_len L: the sequence is seq / L slots and the mask's document
//   boundaries must be the text's real ones, so each slot starts at a document piece. Every
//   document is cut into pieces of at most L bytes; slot j of sequence i takes piece
//   (i * slots + j) mod pieces. A target is the document's next byte (across a cut too), -1
//   at the document's end; a short piece is padded with end tokens whose targets are -1.
// Targets of -1 are not counted in the loss.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/parallelism.hpp"

namespace burst::rt {

inline constexpr std::int32_t kEndOfDocument = 0;  // byte 0 (NUL never occurs in text) ends a document
inline constexpr std::int32_t kNoTarget = -1;      // a position that is not counted in the loss

struct Corpus {
  std::string source;                // the path it was read from
  std::vector<std::string> names;    // one per document (file path relative to source)
  std::vector<std::uint8_t> bytes;   // all documents back to back, each followed by kEndOfDocument
  std::vector<std::int64_t> starts;  // where each document starts in bytes
};

// Reads a text file or a directory of them. Throws burst::Error (where = the path) for a
// missing path, an unreadable file, a file containing NUL (binary: names the file and the byte
// offset) and a corpus with no non-empty file; every problem is reported at once. Empty files
// are skipped.
[[nodiscard]] Corpus read_corpus(const std::string& path);

struct TrainingSequence {
  std::vector<std::int32_t> tokens;   // seq tokens
  std::vector<std::int32_t> targets;  // seq: the next token of each, or kNoTarget
};

// Sequence `index` of `seq` tokens for training under `mask` (see the head comment). Throws
// burst::Error for seq <= 0, index < 0, an empty corpus, or a document mask whose doc_len is
// not positive or does not divide seq.
[[nodiscard]] TrainingSequence training_sequence(const Corpus& corpus, std::int64_t seq, std::int64_t index,
                                                 const Mask& mask);

// A warning when the corpus is shorter than one sequence of `seq` tokens read as a stream (every
// mask but document): each sequence then holds the same text several times over, which a user
// should know before reading the loss curve. Empty when the text is long enough or documents
// are slotted (a short document is padded, never repeated).
[[nodiscard]] std::string repetition_warning(const Corpus& corpus, std::int64_t seq, const Mask& mask);

// A note when some documents are not valid UTF-8 (bytes 0x80-0xFF outside a well-formed UTF-8
// sequence): how many, and the first one with the offset and value of its first such byte. They
// train as bytes like any other text; the note says they are not the UTF-8 the reader might
// assume. Empty when every document is UTF-8 (ASCII included).
[[nodiscard]] std::string encoding_note(const Corpus& corpus);

// How many targets count in the loss (those that are not kNoTarget), in one sequence or a batch.
[[nodiscard]] std::int64_t counted_targets(const TrainingSequence& sequence);
[[nodiscard]] std::int64_t counted_targets(std::span<const TrainingSequence> batch);

// CRC-32 of the corpus's bytes: ranks (and a resumed run) check they read the same text.
[[nodiscard]] std::uint32_t corpus_digest(const Corpus& corpus);

}  // namespace burst::rt
