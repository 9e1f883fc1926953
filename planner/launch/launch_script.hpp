// How to start a plan on the engines clusters already run: the mpirun line (OpenMPI 4.1, as
// Debian 12 ships it) and a Slurm batch script, with the plan's rank count and placement.
//
// mpirun: the `local` topology runs every rank on this machine (its nodes are virtual), so
// `--oversubscribe -np N` and, for root, `--allow-run-as-root`; a cluster runs one host per
// plan node, `-np N --map-by ppr:K:node --hostfile HOSTS` (K ranks per node, one per GPU), which
// is what `burst run`'s placement check (placement.hpp) accepts. Slurm, as sites run it:
// commented placeholders for the time limit, partition and account; `--nodes`,
// `--ntasks-per-node`, `--gpus-per-node`, `--exclusive` with `--mem=0` (the whole node); each
// rank's share of the node's cores in SRUN_CPUS_PER_TASK (Slurm 22.05 and later give a task one
// core otherwise); then `srun --mpi=pmix` (Debian's OpenMPI is built with PMIx; `--mpi=pmi2` is
// named as the alternative), and the requirement of a shared file system stated. The NCCL
// environment: the topology knows how many HCAs a node has but not their names (mlx5_0,3,4,... on
// many H100 nodes), so NCCL_IB_HCA is never guessed: the script shows the exact-match line that
// reads this node's names, commented, and NCCL_SOCKET_IFNAME is left as a hint (the management
// network is not in the topology).
#pragma once

#include <string>
#include <vector>

#include "plan/plan.hpp"

namespace burst::launch {

struct LaunchRequest {
  std::string burst;                  // the burst binary the ranks run
  std::string plan_path;              // the plan they run
  std::vector<std::string> run_args;  // after `burst run PLAN`
  std::string hostfile = "HOSTS";     // a cluster's hostfile (one line per node: host slots=K)
  bool as_root = false;               // the caller is root (OpenMPI refuses root unless told)
};

// mpirun's argv, mpirun first.
[[nodiscard]] std::vector<std::string> mpirun_command(const plan::Plan& plan, const LaunchRequest& request);
// Words joined by spaces, each as escape::shell_word writes it: quoted when it needs it, a
// control character in a path as $'\xNN' (one line, whatever the words hold).
[[nodiscard]] std::string shell_line(const std::vector<std::string>& words);
// What a person needs besides the line, one line each (the hostfile, the NCCL environment, and
// linear layers `burst run` does not train).
[[nodiscard]] std::vector<std::string> mpirun_notes(const plan::Plan& plan);
// A Slurm batch script (sbatch FILE) that runs the plan with srun; the plan's path and names
// reach its comments through escape::comment and its srun line through escape::shell_word.
[[nodiscard]] std::string slurm_script(const plan::Plan& plan, const LaunchRequest& request);

struct EnvVar {
  std::string name;
  std::string example;  // a value to export, as shell text (a person checks it first)
  std::string why;
};
// NCCL variables a person may set for the plan's cluster, each with why (none for `local`).
[[nodiscard]] std::vector<EnvVar> nccl_environment(const plan::Plan& plan);

}  // namespace burst::launch
