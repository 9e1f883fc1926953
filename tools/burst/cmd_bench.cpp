#include "tools/burst/commands.hpp"
namespace burst::cli {
void add_bench_command(CLI::App&) {}
}  // namespace burst::cli
