// Where a plan's ranks run, and whether a job's real placement matches it.
//
// A plan places rank r on (node, local GPU) of its cluster. A job started by mpirun or srun
// places it on a host, with a local rank there (its index among the ranks sharing the host's
// memory, MPI_COMM_TYPE_SHARED, in rank order). The rule `burst run` applies at start:
//   - every rank on one host: accepted; a plan of several nodes is then a simulation of its
//     cluster on one machine (the tests run 32-rank plans so), and a note says so unless the
//     topology is `local`, whose nodes are virtual anyway;
//   - on several hosts: each plan node's ranks must share one host; with a GPU topology (not
//     `local`) a host may hold only one plan node, and each rank's local rank must be its plan
//     GPU (the GPU it drives is its local rank), otherwise ranks of two plan nodes would share
//     one node's GPUs, or a ring hop planned over NVLink would cross the network.
// A refusal names the rank, its host, the plan's node for it, and the launch line to use.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.hpp"

namespace burst::launch {

struct PlanLayout {
  int ranks = 0;
  int nodes = 0;
  int ranks_per_node = 0;  // the most ranks the plan puts on one node
  bool local = false;      // the `local` topology: CPU ranks, virtual nodes
  std::string topology;    // "a800-4hca x4"
};
[[nodiscard]] PlanLayout plan_layout(const plan::Plan& plan);

// Rank r of a job, as it sees itself.
struct JobRank {
  std::string host;
  int local_rank = 0;
};

// Throws burst::Error when `job` (one entry per rank) cannot run the plan as placed; returns
// a one-line note for people ("" when there is nothing to say). A job of another rank count
// is left to the rank-count check (returns ""). `plan_path` names the plan in the hint.
[[nodiscard]] std::string check_placement(const plan::Plan& plan, const std::vector<JobRank>& job,
                                          const std::string& plan_path);

}  // namespace burst::launch
