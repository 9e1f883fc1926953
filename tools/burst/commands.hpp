// Registration of the CLI subcommands; each lives in its own cmd_*.cpp.
// Handlers throw burst::Error on bad input; only main() turns errors into exit codes.
#pragma once

#include <CLI/CLI.hpp>

namespace burst::cli {

void add_topo_command(CLI::App& app);      // burst topo list|show|validate|convert
void add_simulate_command(CLI::App& app);  // burst simulate
void add_bench_command(CLI::App& app);     // burst bench simulate

}  // namespace burst::cli
