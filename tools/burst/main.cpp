// burst: plan and run long-sequence transformer training across GPU clusters.
// Exit codes: 0 success, 1 internal failure, 2 bad input or usage, 130 cut short by Ctrl-C
// (after writing what was done: cut_short.hpp).
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common/error.hpp"
#include "common/interrupt.hpp"
#include "tools/burst/app.hpp"
#include "tools/burst/cut_short.hpp"
#include "tools/burst/failure_message.hpp"

int main(int argc, char** argv) {
  const auto app = burst::cli::make_app();
  try {
    app->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every other usage error is bad input: exit code 2.
    return app->exit(e) == 0 ? 0 : 2;
  } catch (const burst::Error& e) {
    for (const auto& p : e.problems()) fmt::print(stderr, "error: {}\n", p.to_string());
    return 2;
  } catch (const burst::cli::CutShort& e) {
    fmt::print(stderr, "{}\n", e.what());
    return burst::kInterruptedExitCode;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n",
               burst::cli::failure_message(e, burst::cli::workload_of(burst::cli::parsed_command(*app))));
    return 1;
  }
  return 0;
}
