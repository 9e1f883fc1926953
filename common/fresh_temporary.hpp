// A new file beside a target, created so that nothing planted in the directory can redirect it.
//
// Output and checkpoint directories are often shared. A temporary under a predictable name
// ("<out>.tmp.<pid>") lets anyone who can write there plant a symbolic link under that name
// first; a plain open(O_CREAT | O_TRUNC) follows the link and overwrites whatever it points at.
// So a temporary here is named "<target>.<kind>.<pid>.<16 random hex digits>" (the pid tells
// a save's leftovers from a live save's, atomic_file.hpp) and opened with
// O_CREAT | O_EXCL | O_NOFOLLOW: the open fails on any existing name, a symbolic link included
// (POSIX: O_EXCL never follows the last component), and a collision with a planted or earlier
// name is retried under fresh random digits, never reused.
// Used by the atomic writes (common/atomic_file.cpp) and the checkpoint directory's write probe
// (runtime/training/training_run.cpp).
#pragma once

#include <string>
#include <string_view>

namespace burst {

struct FreshTemporary {
  std::string path;  // "<target>.<kind>.<pid>.<random>": the name created, or the last one tried
  int fd = -1;       // open for writing (close-on-exec); -1 when creation failed, with errno set
};

// Creates an empty file, mode 0644 less the umask, beside `target` (same directory).
[[nodiscard]] FreshTemporary create_fresh_temporary(const std::string& target, std::string_view kind);

}  // namespace burst
