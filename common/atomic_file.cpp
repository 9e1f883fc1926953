// Atomic file writes (see atomic_file.hpp).
#include "common/atomic_file.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/error.hpp"
#include "common/fresh_temporary.hpp"

namespace burst {
namespace {

namespace fs = std::filesystem;

// Throws the write's error: "<path>: cannot write <what>: <problem> (hint: <hint>)".
[[noreturn]] void fail_write(const std::string& path, std::string_view what, const std::string& problem,
                             std::string hint) {
  throw Error(Problem{path, fmt::format("cannot write {}: {}", what, problem), "", std::move(hint)});
}

// The pid in a temporary's name "<file>.tmp.<pid>.<hex>" (or "<file>.tmp.<pid>", as older
// saves named them), or 0 when `name` is not one of `file`'s.
pid_t temporary_pid(const std::string& name, const std::string& file) {
  const std::string prefix = file + ".tmp.";
  if (!name.starts_with(prefix)) return 0;
  const std::string_view rest = std::string_view(name).substr(prefix.size());
  const std::string_view digits = rest.substr(0, rest.find('.'));
  const bool tagged = digits.size() < rest.size();
  const std::string_view tag = tagged ? rest.substr(digits.size() + 1) : std::string_view();
  const auto is_digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  const auto is_hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  if (digits.empty() || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), is_digit)) return 0;
  if (tagged && (tag.empty() || !std::all_of(tag.begin(), tag.end(), is_hex))) return 0;
  return static_cast<pid_t>(std::stol(std::string(digits)));
}

// kill(pid, 0) sends nothing; ESRCH says no such process. EPERM means it exists (another user's).
bool process_is_gone(pid_t pid) { return ::kill(pid, 0) == -1 && errno == ESRCH; }

// Removes the temporaries of saves to `target` whose process died before the rename.
void remove_stale_temporaries(const fs::path& target, const fs::path& dir) {
  const std::string file = target.filename().string();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const pid_t pid = temporary_pid(entry.path().filename().string(), file);
    if (pid <= 0 || pid == ::getpid() || !process_is_gone(pid)) continue;
    std::error_code removed;
    if (fs::remove(entry.path(), removed)) {
      fmt::print(stderr, "note: removed '{}', left by a save of process {} that did not finish\n",
                 entry.path().string(), pid);
    }
  }
}

// Writes all of `text` to `fd`, retrying short writes and interrupted calls; errno on failure.
bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Creates a fresh temporary beside `path` (fresh_temporary.hpp), writes `text` and fsyncs it;
// returns its name. On failure removes it and throws.
std::string write_synced(const std::string& path, std::string_view text, std::string_view what) {
  const FreshTemporary temporary = create_fresh_temporary(path, "tmp");
  if (temporary.fd < 0) {
    fail_write(path, what, fmt::format("cannot create '{}': {}", temporary.path, std::strerror(errno)),
               "check the directory is writable");
  }
  const int fd = temporary.fd;
  std::string failure;  // empty while all goes well
  if (!write_all(fd, text)) {
    failure = fmt::format("writing '{}' failed: {}", temporary.path, std::strerror(errno));
  } else if (::fsync(fd) != 0) {
    failure = fmt::format("syncing '{}' to disk failed: {}", temporary.path, std::strerror(errno));
  }
  if (::close(fd) != 0 && failure.empty()) {
    failure = fmt::format("closing '{}' failed: {}", temporary.path, std::strerror(errno));
  }
  if (failure.empty()) return temporary.path;
  std::error_code ignored;
  fs::remove(temporary.path, ignored);
  fail_write(path, what, failure, "check free disk space");
}

// fsyncs the directory, so the rename inside it survives a power loss.
void sync_directory(const std::string& path, const fs::path& dir, std::string_view what) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::string reason = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    fail_write(path, what, fmt::format("syncing the directory '{}' failed: {}", dir.string(), reason),
               "the file is in place but may not survive a power loss; check the file system");
  }
  ::close(fd);
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view text, std::string_view what) {
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    fail_write(path, what, fmt::format("directory '{}' does not exist", dir.string()), "create it first");
  }
  remove_stale_temporaries(target, dir);
  const std::string temporary = write_synced(path, text, what);
  fs::rename(temporary, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    fail_write(path, what, fmt::format("renaming '{}' over it failed: {}", temporary, ec.message()),
               "check the directory is writable and the path is not a directory");
  }
  sync_directory(path, dir, what);
}

}  // namespace burst
