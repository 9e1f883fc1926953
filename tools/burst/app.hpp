// The `burst` command line as one CLI11 app: every subcommand registered, nothing parsed yet.
// main() parses and runs it; tests/fuzz/fuzz_cli.cpp parses it with the callbacks cleared.
#pragma once

#include <memory>

#include <CLI/CLI.hpp>

namespace burst::cli {

// The app with every subcommand (and the `bench` family under `bench`) and --version.
[[nodiscard]] std::unique_ptr<CLI::App> make_app();

}  // namespace burst::cli
