// Writing a file so that it is never seen half-written, even if the process dies mid-write:
// the text goes to "<path>.tmp.<pid>" in the same directory (same file system, so the rename
// cannot degrade into a copy), the stream is flushed and checked, and only then renamed over
// <path>, which POSIX makes atomic. Readers see the old file or the new one, never a mix.
// Plans, reports, what-if grids and calibration profiles are all written this way.
#pragma once

#include <string>
#include <string_view>

namespace burst {

// Throws burst::Error naming `path` and `what` ("the plan", "the report") when the directory
// is missing or unwritable, or the write or rename fails; no temporary is left behind.
void write_file_atomically(const std::string& path, std::string_view text, std::string_view what);

}  // namespace burst
