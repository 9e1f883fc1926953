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
  std::vector<std::string> hcas;
  int index = 0;
  for (int device : node.nic_devices()) {
    const topo::Device& nic = node.devices()[static_cast<std::size_t>(device)];
    for (int port = 1; port <= nic.ports; ++port) {
      hcas.push_back(nic.ports > 1 ? fmt::format("mlx5_{}:{}", index, port) : fmt::format("mlx5_{}", index));
    }
    ++index;
  }
  const topo::NicAttachment& attached = node.nic_of(0);
  const topo::Device& first = node.devices()[static_cast<std::size_t>(node.nic_devices().front())];
  std::string hca_list;
  for (const std::string& h : hcas) hca_list += (hca_list.empty() ? "" : ",") + h;
  return {{"NCCL_IB_HCA", hca_list,
           fmt::format("every network port of a node: the topology has {} NIC(s), {} port(s) of {}, each NIC shared by "
                       "{} GPU(s) ({} path); the names are the usual mlx5_N, check them with `ibv_devinfo -l`",
                       node.nic_devices().size(), cluster.nets_per_node(),
                       units::format_bandwidth(first.port_bandwidth_Bps), attached.gpus_sharing,
                       topo::to_string(node.nic_path(0).cls))},
          {"NCCL_SOCKET_IFNAME", "",
           "NCCL's bootstrap and socket interface: the nodes' management network (e.g. eth0), not in the topology"}};
}

std::vector<std::string> mpirun_notes(const plan::Plan& plan) {
  const PlanLayout l = plan_layout(plan);
  if (l.local) return {fmt::format("placement: {}", describe_layout(l))};
  std::vector<std::string> notes = {
      fmt::format("placement: {}", describe_layout(l)),
      fmt::format("--hostfile: a file naming the {} nodes, one line each: `<host> slots={}`", l.nodes,
                  l.ranks_per_node)};
  for (const EnvVar& v : nccl_environment(plan)) {
    notes.push_back(v.value.empty() ? fmt::format("{}: {}; export it and add -x {}", v.name, v.why, v.name)
                                    : fmt::format("export {}={} and add -x {}: {}", v.name, v.value, v.name, v.why));
  }
  return notes;
}

std::string slurm_script(const plan::Plan& plan, const LaunchRequest& request) {
  const PlanLayout l = plan_layout(plan);
  std::string s = "#!/bin/bash\n";
  s += fmt::format("# Slurm batch script written by burst {} (burst launch --slurm) for {}\n", BURST_VERSION,
                   escape::comment(request.plan_path));
  s += fmt::format("# {}\n", escape::comment(describe_layout(l)));
  s += "# submit with sbatch; add your site's partition, account and time limit\n";
  s += "#SBATCH --job-name=burst\n";
  s += fmt::format("#SBATCH --nodes={}\n", l.local ? 1 : l.nodes);
  s += fmt::format("#SBATCH --ntasks-per-node={}\n", l.local ? l.ranks : l.ranks_per_node);
  if (!l.local) {
    s += fmt::format("#SBATCH --gpus-per-node={}\n", l.ranks_per_node);
    s += "#SBATCH --exclusive\n";
  }
  s += "set -euo pipefail\n";
  const std::vector<EnvVar> env = nccl_environment(plan);
  if (!env.empty()) s += "\n";
  for (const EnvVar& v : env) {
    s += fmt::format("# {}: {}\n", v.name, escape::comment(v.why));
    s += v.value.empty() ? fmt::format("# export {}=eth0\n", v.name)
                         : fmt::format("export {}=\"${{{}:-{}}}\"\n", v.name, v.name, v.value);
  }
  std::vector<std::string> srun = {"srun", "--mpi=pmix"};
  if (l.local) srun.emplace_back("--overcommit");
  const std::vector<std::string> run = run_words(request);
  srun.insert(srun.end(), run.begin(), run.end());
  s += '\n';
  s += shell_line(srun);
  s += '\n';
  return s;
}

}  // namespace burst::launch
