// What `burst` says of a failure that is not a burst::Error, by command. An allocation that
// fails (std::bad_alloc) means the input asks for more memory than this machine gives, and what
// to make smaller depends on what the command does: a run's tokens per rank, a search's cluster
// and sequence, a topology's nodes, a plan file's size. Anything else is an internal error.
#pragma once

#include <exception>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace burst::cli {

// What a command's memory goes to, which picks the out-of-memory hint.
enum class Workload {
  PlanOnRanks,  // run, bench training, bench precision: a plan's steps on this rank
  Search,       // plan, simulate, capacity, whatif, bench plan, bench simulate: modelling a job
  Topology,     // topo ...: a cluster's devices and paths
  PlanFile,     // explain, report, export, launch: a plan read whole
  Other,        // calibrate, bench attention, bench fidelity, and no command at all
};

// The subcommands `app` parsed, as typed: "topo show", "bench training", "run"; "" for none.
[[nodiscard]] std::string parsed_command(const CLI::App& app);
// The workload of a command path as parsed_command gives it.
[[nodiscard]] Workload workload_of(std::string_view command);

// "out of memory: ... (hint: ...)" for std::bad_alloc, with the hint of `workload`;
// "internal error: <what>" for anything else.
[[nodiscard]] std::string failure_message(const std::exception& e, Workload workload);

}  // namespace burst::cli
