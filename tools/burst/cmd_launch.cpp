// burst launch plan.json [--slurm] [--exec] [--hostfile FILE] [-o FILE] [-- run arguments]: how
// to start the plan: the mpirun line (stdout), a Slurm batch script (--slurm), or the line run
// (--exec, mpirun replacing this process). Every rank runs this very burst binary: `burst run
// plan.json` and the arguments after `--`. What a person must add (a hostfile, the NCCL
// environment) goes to stderr.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <unistd.h>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/escape.hpp"
#include "plan/plan.hpp"
#include "planner/launch/launch_script.hpp"
#include "planner/launch/placement.hpp"
#include "tools/burst/commands.hpp"

namespace burst::cli {
namespace {

struct LaunchOptions {
  std::string plan;
  std::vector<std::string> run_args;
  std::string hostfile;
  std::string output;
  bool slurm = false;
  bool exec = false;
};

// This binary, so that the ranks run the burst that printed the line.
std::string own_path() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("burst") : self.string();
}

[[noreturn]] void exec_line(const std::vector<std::string>& argv) {
  fmt::print(stderr, "launch: {}\n", launch::shell_line(argv));
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<char*> args;
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): execv takes char* const[] and writes none
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args.front(), args.data());
  throw Error(Problem{"--exec", fmt::format("cannot run {}: {}", argv.front(), std::strerror(errno)), "",
                      "install OpenMPI's launcher (Debian: openmpi-bin) or put mpirun on PATH"});
}

void run(const LaunchOptions& o) {
  const plan::Plan plan = plan::read_plan(o.plan);
  const launch::PlanLayout layout = launch::plan_layout(plan);
  launch::LaunchRequest request;
  request.burst = own_path();
  request.plan_path = std::filesystem::absolute(o.plan).lexically_normal().string();
  request.run_args = o.run_args;
  request.as_root = ::geteuid() == 0;
  if (!o.hostfile.empty()) request.hostfile = o.hostfile;
  if (o.exec && !layout.local && o.hostfile.empty()) {
    throw Error(Problem{
        "--exec", fmt::format("a plan of {} nodes ({}) needs the hosts to run on", layout.nodes, layout.topology),
        "with --hostfile FILE", fmt::format("one line per node: `<host> slots={}`", layout.ranks_per_node)});
  }
  if (o.slurm) {
    const std::string script = launch::slurm_script(plan, request);
    if (o.output.empty()) {
      fmt::print("{}", script);
    } else {
      write_file_atomically(o.output, script, "the Slurm batch script");
      fmt::print(stderr, "Slurm batch script written to {} (submit it with sbatch)\n", escape::terminal(o.output));
    }
    return;
  }
  const std::vector<std::string> argv = launch::mpirun_command(plan, request);
  for (const std::string& note : launch::mpirun_notes(plan)) fmt::print(stderr, "note: {}\n", escape::terminal(note));
  if (o.exec) exec_line(argv);
  const std::string line = launch::shell_line(argv) + "\n";
  if (o.output.empty()) {
    fmt::print("{}", line);
  } else {
    write_file_atomically(o.output, line, "the mpirun line");
    fmt::print(stderr, "mpirun line written to {}\n", escape::terminal(o.output));
  }
}

}  // namespace

void add_launch_command(CLI::App& app) {
  auto options = std::make_shared<LaunchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "launch", "Print the mpirun line that starts a plan (--slurm: a Slurm batch script; --exec: run the line)");
  cmd->add_option("plan", options->plan, "A plan file (burst.plan/2)")->required();
  cmd->add_option("run-args", options->run_args,
                  "Arguments after `--` go to `burst run PLAN` (e.g. -- --steps 30 --check)");
  auto* slurm = cmd->add_flag("--slurm", options->slurm,
                              "Write a Slurm batch script instead: nodes, tasks and GPUs per node, srun --mpi=pmix, "
                              "the NCCL environment of the plan's cluster");
  auto* exec = cmd->add_flag("--exec", options->exec, "Run the mpirun line now (mpirun replaces this process)");
  cmd->add_option("--hostfile", options->hostfile,
                  "A cluster plan's hostfile for the mpirun line (one line per node: host slots=K); default HOSTS");
  auto* output = cmd->add_option("-o,--output", options->output, "Write the line or the script to this file");
  exec->excludes(slurm);
  exec->excludes(output);
  cmd->callback([options] { run(*options); });
}

}  // namespace burst::cli
