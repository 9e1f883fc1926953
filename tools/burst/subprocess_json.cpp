// Running a command and reading its JSON (see subprocess_json.hpp).
#include "tools/burst/subprocess_json.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "common/escape.hpp"

namespace burst::cli {

Json CommandResult::json() const {
  std::size_t start = output.rfind("\n{\n");
  start = start == std::string::npos ? (output.starts_with("{\n") ? 0 : std::string::npos) : start + 1;
  if (start == std::string::npos) {  // a one-line object: the last non-empty line
    const std::size_t end = output.find_last_not_of('\n');
    start = end == std::string::npos ? 0 : output.rfind('\n', end);
    start = start == std::string::npos ? 0 : start + 1;
  }
  const Json parsed = Json::parse(output.substr(start), nullptr, false);
  return parsed.is_object() ? parsed : Json(Json::value_t::discarded);
}

CommandResult run_command(const std::string& command) {
  CommandResult result;
  // popen runs /bin/sh, dash on Debian: it hands the command to bash as one printable word.
  FILE* pipe = popen(("exec bash -c " + escape::shell_word(command)).c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> chunk{};
  while (const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe)) result.output.append(chunk.data(), n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string own_executable() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

}  // namespace burst::cli
