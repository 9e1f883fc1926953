#include "tools/burst/commands.hpp"
namespace burst::cli {
void add_topo_command(CLI::App&) {}
}  // namespace burst::cli
