#include "common/untrusted_file.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/units.hpp"

namespace burst {
namespace {

// A file descriptor closed on every path out.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

std::string open_failure(int error) {
  switch (error) {
    case ENOTDIR: return "a part of the path is not a directory";
    case EACCES: return "permission denied";
    case ELOOP: return "a loop of symbolic links (or too many of them in a row)";
    case ENAMETOOLONG: return "the path is too long";
    default: return std::strerror(error);
  }
}

std::string_view file_type(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

[[noreturn]] void over_cap(const std::string& path, const FileCap& cap, std::string_view size) {
  throw Error(
      Problem{path, fmt::format("{} of {}", size, cap.kind),
              fmt::format("{} of at most {}", cap.kind, units::format_bytes(static_cast<double>(cap.max_bytes))),
              "is this the file you meant?"});
}

}  // namespace

std::string read_untrusted_file(const std::string& path, const FileCap& cap) {
  const Descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    const int error = errno;
    if (error == ENOENT) throw Error(Problem{path, "no such file", "", "check the path"});
    throw Error(
        Problem{path, fmt::format("cannot open file: {}", open_failure(error)), "", "check the path and permissions"});
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    throw Error(Problem{path, fmt::format("cannot read the file's type: {}", std::strerror(errno)), "", ""});
  }
  if (!S_ISREG(info.st_mode)) {
    throw Error(Problem{path, fmt::format("{}, not a regular file", file_type(info.st_mode)),
                        fmt::format("{} in a regular file", cap.kind), ""});
  }
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (size > cap.max_bytes) over_cap(path, cap, units::format_bytes(static_cast<double>(size)));
  // Blocking reads from here on: a regular file's read does not wait for a writer.
  (void)::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  std::string text(static_cast<std::size_t>(size), '\0');
  std::size_t done = 0;
  for (;;) {
    if (done == text.size()) {
      // The file may have grown since fstat: read on, up to the cap and one byte past it.
      if (done > cap.max_bytes) over_cap(path, cap, "more than the cap");
      text.resize(std::min<std::uint64_t>(std::max<std::size_t>(2 * done, 4096), cap.max_bytes + 1));
    }
    const ssize_t n = ::read(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(Problem{path, fmt::format("reading the file failed: {}", std::strerror(errno)), "", ""});
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  if (done > cap.max_bytes) over_cap(path, cap, "more than the cap");
  text.resize(done);
  return text;
}

}  // namespace burst
