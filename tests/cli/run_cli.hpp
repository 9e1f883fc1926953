// Runs the built `burst` binary (BURST_CLI) with arguments and captures stdout, stderr and
// the exit code, so CLI tests check exactly what a user sees.
#pragma once

#include <string>

namespace burst::test {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// `args` is appended to the binary's path as shell words (tests pass fixed, quoted strings).
CliRun run_cli(const std::string& args);

}  // namespace burst::test
