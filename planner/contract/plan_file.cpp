// Plan files: reading with the file name in every error, writing atomically.
//
// write_plan never leaves half a plan behind, even if the process dies mid-write: the text
// goes to "<path>.tmp.<pid>" in the same directory (same file system, so the rename cannot
// degrade into a copy), the stream is flushed and checked, and only then renamed over
// <path>, which POSIX makes atomic. Readers see the old plan or the new one, never a mix.
#include <filesystem>
#include <fstream>
#include <system_error>

#include <fmt/format.h>
#include <unistd.h>

#include "planner/contract/plan.hpp"

namespace burst::plan {
namespace {

[[noreturn]] void cannot_write(const std::string& path, std::string what, std::string hint) {
  throw Error(Problem{path, "cannot write the plan: " + std::move(what), "", std::move(hint)});
}

}  // namespace

Plan read_plan(const std::string& path) { return plan_from_json(read_json_file(path), path); }

void write_plan(const Plan& plan, const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    cannot_write(path, fmt::format("directory '{}' does not exist", dir.string()), "create it first");
  }
  const std::string temporary = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) cannot_write(path, fmt::format("cannot create '{}'", temporary), "check the directory is writable");
    out << to_json(plan).dump(2) << '\n';
    out.flush();
    if (!out) {
      out.close();
      fs::remove(temporary, ec);
      cannot_write(path, fmt::format("writing '{}' failed", temporary), "check free disk space");
    }
  }
  fs::rename(temporary, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    cannot_write(path, fmt::format("renaming '{}' over it failed: {}", temporary, ec.message()),
                 "check the directory is writable and the path is not a directory");
  }
}

}  // namespace burst::plan
