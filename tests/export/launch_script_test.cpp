// The mpirun line and the Slurm script of a plan: a cluster plan (BurstEngine's 14B 1M case on
// 4 nodes of a800-4hca) and a local plan.
#include <catch2/catch.hpp>

#include <algorithm>

#include "planner/launch/launch_script.hpp"

using namespace burst;

namespace {

const std::string kClusterPlan = std::string(BURST_TEST_DATA) + "/plans/a800x4-burst14b-1M.json";
const std::string kLocalPlan = std::string(BURST_TEST_DATA) + "/run/local-2x2-tiny-mha-1K-default.json";

launch::LaunchRequest request(const std::string& plan, std::vector<std::string> args = {}) {
  launch::LaunchRequest r;
  r.burst = "/opt/burst/bin/burst";
  r.plan_path = plan;
  r.run_args = std::move(args);
  return r;
}

}  // namespace

TEST_CASE("a cluster plan starts one host per node, K ranks each") {
  const plan::Plan p = plan::read_plan(kClusterPlan);
  CHECK(launch::shell_line(launch::mpirun_command(p, request("plan.json"))) ==
        "mpirun -np 32 --map-by ppr:8:node --hostfile HOSTS /opt/burst/bin/burst run plan.json");
}

TEST_CASE("a local plan runs every rank here, oversubscribed, and as root when root") {
  const plan::Plan p = plan::read_plan(kLocalPlan);
  launch::LaunchRequest r = request("local.json", {"--steps", "30", "--check"});
  CHECK(launch::shell_line(launch::mpirun_command(p, r)) ==
        "mpirun --oversubscribe -np 4 /opt/burst/bin/burst run local.json --steps 30 --check");
  r.as_root = true;
  CHECK(launch::mpirun_command(p, r)[1] == "--allow-run-as-root");
}

TEST_CASE("the notes say when a plan's linear layers are ones burst run does not train") {
  plan::Plan p = plan::read_plan(kLocalPlan);
  const auto says_linears = [](const std::vector<std::string>& notes) {
    return std::any_of(notes.begin(), notes.end(),
                       [](const std::string& n) { return n.find("/job/linears") != std::string::npos; });
  };
  CHECK_FALSE(says_linears(launch::mpirun_notes(p)));
  p.job.linears = "fp8";
  CHECK(says_linears(launch::mpirun_notes(p)));
  CHECK(launch::mpirun_notes(p).front().starts_with("placement: "));
}

TEST_CASE("the Slurm script of a 4-node a800-4hca plan") {
  const plan::Plan p = plan::read_plan(kClusterPlan);
  const std::string script = launch::slurm_script(p, request("/data/plan.json", {"--attention-only", "--check"}));
  CHECK_THAT(script, Catch::StartsWith("#!/bin/bash\n"));
  for (const char* line :
       {"#SBATCH --nodes=4\n", "#SBATCH --ntasks-per-node=8\n", "#SBATCH --gpus-per-node=8\n",
        "#SBATCH --exclusive\n#SBATCH --mem=0\n", "##SBATCH --time=HH:MM:SS\n",
        "# export NCCL_IB_HCA=\"=$(ls /sys/class/infiniband | paste -sd, -)\"\n", "# export NCCL_SOCKET_IFNAME=eth0\n",
        "srun --mpi=pmix /opt/burst/bin/burst run /data/plan.json --attention-only --check\n"}) {
    CHECK_THAT(script, Catch::Contains(line));
  }
  CHECK_THAT(script, Catch::Contains("4 NIC(s) a node, 4 port(s) of 25GBps, each NIC shared by 2 GPU(s) (PIX path)"));
}

TEST_CASE("the Slurm script of a local plan: one machine, no GPUs, no NCCL") {
  const std::string script = launch::slurm_script(plan::read_plan(kLocalPlan), request("local.json"));
  CHECK_THAT(script, Catch::Contains("#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=4\n"));
  CHECK_THAT(script, !Catch::Contains("--gpus-per-node"));
  CHECK_THAT(script, !Catch::Contains("NCCL"));
}

TEST_CASE("words a shell would split are quoted") {
  CHECK(launch::shell_line({"burst", "run", "my plan.json", "it's"}) == "burst run 'my plan.json' 'it'\\''s'");
}
