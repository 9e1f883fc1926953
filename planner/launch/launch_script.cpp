// mpirun lines and Slurm scripts of a plan (see launch_script.hpp).
#include "planner/launch/launch_script.hpp"

#include <fmt/format.h>

#include "common/escape.hpp"
#include "common/units.hpp"
#include "planner/launch/placement.hpp"
#include "topologies/json_format.hpp"
#include "topologies/node_template.hpp"

namespace burst::launch {
namespace {

std::vector<std::string> run_words(const LaunchRequest& r) {
  std::vector<std::string> words = {r.burst, "run", r.plan_path};
  words.insert(words.end(), r.run_args.begin(), r.run_args.end());
  return words;
}

std::string describe_layout(const PlanLayout& l) {
  if (l.local) {
    return fmt::format("{}: {} CPU ranks as {} virtual node(s) of {}, all on this machine", l.topology, l.ranks,
                       l.nodes, l.ranks_per_node);
  }
  return fmt::format("{}: {} nodes x {} ranks (one per GPU), {} ranks", l.topology, l.nodes, l.ranks_per_node, l.ranks);
}

}  // namespace

std::string shell_line(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& w : words) {
    if (!line.empty()) line += ' ';
    line += escape::shell_word(w);
  }
  return line;
}

std::vector<std::string> mpirun_command(const plan::Plan& plan, const LaunchRequest& request) {
  const PlanLayout l = plan_layout(plan);
  std::vector<std::string> argv = {"mpirun"};
  if (l.local) {
    if (request.as_root) argv.emplace_back("--allow-run-as-root");
    argv.insert(argv.end(), {"--oversubscribe", "-np", std::to_string(l.ranks)});
  } else {
    argv.insert(argv.end(), {"-np", std::to_string(l.ranks), "--map-by", fmt::format("ppr:{}:node", l.ranks_per_node),
                             "--hostfile", request.hostfile});
  }
  const std::vector<std::string> run = run_words(request);
  argv.insert(argv.end(), run.begin(), run.end());
  return argv;
}

std::vector<EnvVar> nccl_environment(const plan::Plan& plan) {
  if (plan_layout(plan).local || !plan.cluster.is_object()) return {};
  const topo::Topology cluster = topo::parse_topology_json(plan.cluster, "plan:/cluster");
  const topo::NodeTemplate& node = cluster.node();
  if (node.nic_devices().empty()) return {};
  const topo::NicAttachment& attached = node.nic_of(0);
  const topo::Device& first = node.devices()[static_cast<std::size_t>(node.nic_devices().front())];
  // The device names are the site's (mlx5_0,3,4,5,6,9,10,11 on many H100 nodes), not the
  // topology's: never guessed. NCCL uses every active HCA unless told; a list pins them, and
  // only with '=' in front does it match names exactly (mlx5_1 would also match mlx5_10).
  return {{"NCCL_IB_HCA", "\"=$(ls /sys/class/infiniband | paste -sd, -)\"",
           fmt::format("the topology has {} NIC(s) a node, {} port(s) of {}, each NIC shared by {} GPU(s) ({} path); "
                       "NCCL uses every active HCA by itself. To pin them, list this node's names exactly (a leading "
                       "'=': unprefixed, mlx5_1 also matches mlx5_10), as found in /sys/class/infiniband or by "
                       "ibdev2netdev",
                       node.nic_devices().size(), cluster.nets_per_node(),
                       units::format_bandwidth(first.port_bandwidth_Bps), attached.gpus_sharing,
                       topo::to_string(node.nic_path(0).cls))},
          {"NCCL_SOCKET_IFNAME", "eth0",
           "NCCL's bootstrap and socket interface: the nodes' management network (e.g. eth0), not in the topology"}};
}

std::vector<std::string> mpirun_notes(const plan::Plan& plan) {
  const PlanLayout l = plan_layout(plan);
  std::vector<std::string> notes = {fmt::format("placement: {}", describe_layout(l))};
  if (!plan.job.linears.empty()) {
    notes.push_back(fmt::format(
        "/job/linears: the plan's linear layers are {}, which burst run does not train (its GEMMs are bf16 or fp32; "
        "--attention-only runs); the frameworks burst export writes for run them",
        plan.job.linears));
  }
  if (l.local) return notes;
  notes.push_back(fmt::format("--hostfile: a file naming the {} nodes, one line each: `<host> slots={}`", l.nodes,
                              l.ranks_per_node));
  for (const EnvVar& v : nccl_environment(plan)) {
    notes.push_back(fmt::format("{}: {}; export it and add -x {}", v.name, v.why, v.name));
  }
  return notes;
}

std::string slurm_script(const plan::Plan& plan, const LaunchRequest& request) {
  const PlanLayout l = plan_layout(plan);
  const int tasks_per_node = l.local ? l.ranks : l.ranks_per_node;
  std::string s = "#!/bin/bash\n";
  s += fmt::format("# Slurm batch script written by burst {} (burst launch --slurm) for {}\n", BURST_VERSION,
                   escape::comment(request.plan_path));
  s += fmt::format("# {}\n", escape::comment(describe_layout(l)));
  s += "# Submit with sbatch from a shared file system: every node reads the plan, burst and the data (--data, "
       "--resume) at the same paths, and --save writes there.\n";
  s += "# Your site's limits: remove one '#' of each line below and fill it in (a '##SBATCH' line is a comment to "
       "Slurm).\n";
  s += "##SBATCH --time=HH:MM:SS\n";
  s += "##SBATCH --partition=PARTITION\n";
  s += "##SBATCH --account=ACCOUNT\n";
  s += "#SBATCH --job-name=burst\n";
  s += fmt::format("#SBATCH --nodes={}\n", l.local ? 1 : l.nodes);
  s += fmt::format("#SBATCH --ntasks-per-node={}\n", tasks_per_node);
  if (!l.local) {
    s += fmt::format("#SBATCH --gpus-per-node={}\n", l.ranks_per_node);
    s += "#SBATCH --exclusive\n";
    s += "#SBATCH --mem=0\n";  // every byte of the node's memory: --exclusive alone does not give it
  }
  s += "set -euo pipefail\n\n";
  // Since Slurm 22.05 srun no longer inherits sbatch's --cpus-per-task: without SRUN_CPUS_PER_TASK
  // each rank gets one core, which starves host-side work (an offloaded optimizer step, data).
  s += "# Each rank's share of the node's cores (srun reads SRUN_CPUS_PER_TASK; since Slurm 22.05 it no longer "
       "inherits sbatch's --cpus-per-task, and a rank pinned to one core starves an offloaded optimizer step)\n";
  s += fmt::format("export SRUN_CPUS_PER_TASK=\"${{SRUN_CPUS_PER_TASK:-$(( ${{SLURM_CPUS_ON_NODE:-{}}} / {} ))}}\"\n",
                   tasks_per_node, tasks_per_node);
  for (const EnvVar& v : nccl_environment(plan)) {
    s += fmt::format("\n# {}: {}\n# export {}={}\n", v.name, escape::comment(v.why), v.name, v.example);
  }
  std::vector<std::string> srun = {"srun", "--mpi=pmix"};
  if (l.local) srun.emplace_back("--overcommit");
  const std::vector<std::string> run = run_words(request);
  srun.insert(srun.end(), run.begin(), run.end());
  s += "\n# --mpi=pmix: Slurm's PMIx plugin; where a site's Slurm has none, --mpi=pmi2 (srun --mpi=list shows "
       "them)\n";
  s += shell_line(srun);
  s += '\n';
  return s;
}

}  // namespace burst::launch
