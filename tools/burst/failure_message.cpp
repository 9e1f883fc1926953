// Failure messages by command (see failure_message.hpp).
#include "tools/burst/failure_message.hpp"

#include <new>

#include <fmt/format.h>

namespace burst::cli {

std::string parsed_command(const CLI::App& app) {
  std::string path;
  for (const CLI::App* at = &app; !at->get_subcommands().empty();) {
    at = at->get_subcommands().front();
    path += (path.empty() ? "" : " ") + at->get_name();
  }
  return path;
}

Workload workload_of(std::string_view command) {
  const std::string_view first = command.substr(0, command.find(' '));
  if (command == "run" || command == "bench training" || command == "bench precision") return Workload::PlanOnRanks;
  if (first == "topo") return Workload::Topology;
  if (command == "plan" || command == "simulate" || command == "capacity" || command == "whatif" ||
      command == "bench plan" || command == "bench simulate") {
    return Workload::Search;
  }
  if (command == "explain" || command == "report" || command == "export" || command == "launch")
    return Workload::PlanFile;
  return Workload::Other;
}

std::string failure_message(const std::exception& e, Workload workload) {
  if (dynamic_cast<const std::bad_alloc*>(&e) == nullptr) return fmt::format("internal error: {}", e.what());
  switch (workload) {
    case Workload::PlanOnRanks:
      return "out of memory: this rank could not allocate what the plan needs (hint: fewer tokens per rank, i.e. more "
             "ranks or a shorter sequence; a checkpoint policy that keeps less; more LM-head chunks; a higher ZeRO "
             "stage)";
    case Workload::Search:
      return "out of memory: modelling this job needs more memory than this machine gives (hint: fewer nodes, a "
             "shorter --seq, one --strategy; for whatif, fewer --vary values)";
    case Workload::Topology:
      return "out of memory: the topology needs more memory than this machine gives (hint: fewer --nodes; is the file "
             "a topology of one machine's node?)";
    case Workload::PlanFile:
      return "out of memory: reading the plan needs more memory than this machine gives (hint: is the file a plan "
             "`burst plan` wrote? a plan of fewer nodes is smaller)";
    case Workload::Other: break;
  }
  return "out of memory: this command needs more memory than this machine gives (hint: close other programs, or run "
         "fewer ranks on this machine)";
}

}  // namespace burst::cli
