#include "tools/burst/commands.hpp"
namespace burst::cli {
void add_simulate_command(CLI::App&) {}
}  // namespace burst::cli
