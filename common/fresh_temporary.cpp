// Fresh temporaries beside a target (see fresh_temporary.hpp).
#include "common/fresh_temporary.hpp"

#include <cerrno>
#include <cstdint>
#include <random>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

namespace burst {

FreshTemporary create_fresh_temporary(const std::string& target, std::string_view kind) {
  // std::random_device reads the kernel's entropy: the names cannot be guessed from the pid or
  // the time. 64 tries: a collision with 64 random bits means something keeps planting names.
  std::random_device entropy;
  FreshTemporary made;
  for (int attempt = 0; attempt < 64; ++attempt) {
    const std::uint64_t tag = (static_cast<std::uint64_t>(entropy()) << 32) | entropy();
    made.path = fmt::format("{}.{}.{}.{:016x}", target, kind, ::getpid(), tag);
    made.fd = ::open(made.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (made.fd >= 0 || errno != EEXIST) return made;
  }
  return made;
}

}  // namespace burst
