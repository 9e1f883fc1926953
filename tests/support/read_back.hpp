// Test helper: generated text read back by the program it is meant for (bash, Python's yaml
// and tomllib, an XML parser), so a test checks what the reader of the output sees, not only
// its bytes; and a scan for raw control characters no generated text may carry.
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include "common/json_reader.hpp"

namespace burst::test {

struct ShellRun {
  int status = -1;  // the shell's exit status
  std::string out;  // its stdout
};

// `command` run by /bin/sh.
inline ShellRun shell_run(const std::string& command) {
  ShellRun run;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) run.out.append(buffer, n);
  const int status = ::pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// `text` quoted for /bin/sh (dash): single quotes, which keep every byte, a line break too.
inline std::string sh_quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `text` in a file of `dir` loaded by python3 as JSON: `loader` is an expression over the open
// binary file f ("yaml.safe_load(f)", "tomllib.load(f)"). Status != 0 when Python refused it.
inline ShellRun python_loaded(const std::filesystem::path& dir, const std::string& text, const std::string& loader) {
  const std::filesystem::path file = dir / "python-input";
  std::ofstream(file, std::ios::binary) << text;
  return shell_run(
      "python3 -c " +
      sh_quoted("import json, sys, yaml, tomllib; f = open(sys.argv[1], 'rb'); print(json.dumps(" + loader + "))") +
      " " + sh_quoted(file.string()) + " 2>&1");
}

// The offset of the first byte below 0x20 other than a line break (or DEL), or npos.
inline std::size_t raw_control_at(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return i;
  }
  return std::string::npos;
}

}  // namespace burst::test
