// Reading a file whose bytes come from outside the program: a plan, a topology, a calibration,
// a training state, a corpus. A path on the command line can name anything, so the read is
// bounded before a byte is taken:
//
//   - the file is opened without blocking (O_NONBLOCK): a FIFO or a terminal given as a plan
//     cannot stall the open, whatever --timeout says, because nothing waits;
//   - it must be a regular file (fstat after the open, so no race with a rename): /dev/zero, a
//     FIFO, a socket or a directory is refused by what it is;
//   - its size must be within the cap of its kind (FileCap), and the message says the cap; a
//     file that grows while it is read is stopped at the cap, not followed;
//   - errno is turned into words a user can act on ("a loop of symbolic links", "permission
//     denied"), with the path.
//
// Integers read from the bytes that index memory are the parser's business (overflow-safe
// comparisons against the sizes they index); this module bounds the bytes themselves.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace burst {

// What a file is read as, and the most bytes such a file may hold.
struct FileCap {
  std::string_view kind;  // "a plan": names the file's role in messages
  std::uint64_t max_bytes = 0;
};

inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// The whole of a regular file of at most cap.max_bytes bytes; throws burst::Error naming
// `path` and what is wrong (missing, not a regular file, over the cap, unreadable).
[[nodiscard]] std::string read_untrusted_file(const std::string& path, const FileCap& cap);

}  // namespace burst
