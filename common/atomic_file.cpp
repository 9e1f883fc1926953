// Atomic file writes (see atomic_file.hpp).
#include "common/atomic_file.hpp"

#include <filesystem>
#include <fstream>
#include <system_error>

#include <fmt/format.h>
#include <unistd.h>

#include "common/error.hpp"

namespace burst {

void write_file_atomically(const std::string& path, std::string_view text, std::string_view what) {
  namespace fs = std::filesystem;
  const auto fail = [&](std::string problem, std::string hint) {
    throw Error(Problem{path, fmt::format("cannot write {}: {}", what, problem), "", std::move(hint)});
  };
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail(fmt::format("directory '{}' does not exist", dir.string()), "create it first");
  const std::string temporary = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) fail(fmt::format("cannot create '{}'", temporary), "check the directory is writable");
    out << text;
    out.flush();
    if (!out) {
      out.close();
      fs::remove(temporary, ec);
      fail(fmt::format("writing '{}' failed", temporary), "check free disk space");
    }
  }
  fs::rename(temporary, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    fail(fmt::format("renaming '{}' over it failed: {}", temporary, ec.message()),
         "check the directory is writable and the path is not a directory");
  }
}

}  // namespace burst
