// How to start a plan on the engines clusters already run: the mpirun line (OpenMPI 4.1, as
// Debian 12 ships it) and a Slurm batch script, with the plan's rank count and placement.
//
// mpirun: the `local` topology runs every rank on this machine (its nodes are virtual), so
// `--oversubscribe -np N` and, for root, `--allow-run-as-root`; a cluster runs one host per
// plan node, `-np N --map-by ppr:K:node --hostfile HOSTS` (K ranks per node, one per GPU), which
// is what `burst run`'s placement check (placement.hpp) accepts. Slurm: `--nodes`,
// `--ntasks-per-node`, `--gpus-per-node`, then `srun --mpi=pmix` (Debian's OpenMPI is built
// with PMIx). The NCCL environment the topology implies: NCCL_IB_HCA lists one HCA per network
// port of a node (the topology counts them; the names are the usual mlx5_N, to check with
// `ibv_devinfo -l`), and NCCL_SOCKET_IFNAME is left as a hint (the management network is not in
// the topology).
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
// What a person needs besides the line, one line each (the hostfile, the NCCL environment).
[[nodiscard]] std::vector<std::string> mpirun_notes(const plan::Plan& plan);
// A Slurm batch script (sbatch FILE) that runs the plan with srun; the plan's path and names
// reach its comments through escape::comment and its srun line through escape::shell_word.
[[nodiscard]] std::string slurm_script(const plan::Plan& plan, const LaunchRequest& request);

struct EnvVar {
  std::string name, value, why;
};
// NCCL variables the plan's cluster implies (none for `local`).
[[nodiscard]] std::vector<EnvVar> nccl_environment(const plan::Plan& plan);

}  // namespace burst::launch
