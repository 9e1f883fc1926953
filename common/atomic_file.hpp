// Writing a file so that it is never seen half-written, even if the process dies mid-write or
// the machine loses power: the text goes to a fresh temporary "<path>.tmp.<pid>.<random>" in the
// same directory (same file system, so the rename cannot degrade into a copy; created with
// O_EXCL | O_NOFOLLOW under an unguessable name, so a symbolic link planted in a shared
// directory is never followed: fresh_temporary.hpp), is written in full and fsynced, and only
// then renamed over <path>, which POSIX makes atomic; the directory is fsynced after the rename,
// so the new name itself is on disk. Without the first fsync a crash can leave <path> naming a
// file whose blocks never reached the disk; without the second, the old name can come back.
// Readers see the old file or the new one, never a mix.
//
// A save cut short (a killed process) leaves its "<path>.tmp.<pid>.<random>" behind. The next save to
// the same path removes every such temporary whose process no longer exists, and says so in one
// line on stderr; a temporary of a live process (another save in flight) is left alone.
// Plans, reports, what-if grids, calibration profiles and training states are all written this way.
#pragma once

#include <string>
#include <string_view>

namespace burst {

// Throws burst::Error naming `path` and `what` ("the plan", "the report") when the directory
// is missing or unwritable, or the write, an fsync or the rename fails; no temporary of this
// process is left behind.
void write_file_atomically(const std::string& path, std::string_view text, std::string_view what);

}  // namespace burst
