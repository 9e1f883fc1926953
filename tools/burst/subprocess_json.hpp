// Another program's JSON, for the benchmarks that set burst beside a reference run in another
// process (PyTorch through tools/bench/*.py) or run burst's own commands one row at a time.
#pragma once

#include <string>

#include "common/json_reader.hpp"

namespace burst::cli {

struct CommandResult {
  int status = -1;     // the shell's exit status (-1: it could not be started)
  std::string output;  // what the command printed on stdout (redirect stderr into it to keep it)
  // The JSON object the command printed last: from its last line that is "{" (a pretty-printed
  // object), or its last line alone (a one-line object); discarded when there is none.
  [[nodiscard]] Json json() const;
};

// Runs `command` through bash (its words quoted by escape::shell_word, whose $'...' form for a
// control character in a path dash does not read) and collects its stdout.
[[nodiscard]] CommandResult run_command(const std::string& command);

// This executable's own path (/proc/self/exe), for commands that run burst again.
[[nodiscard]] std::string own_executable();

}  // namespace burst::cli
