// The placement check (see placement.hpp).
#include "planner/launch/placement.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "common/error.hpp"

namespace burst::launch {
namespace {

std::string launch_hint(const PlanLayout& layout, const std::string& plan_path) {
  if (layout.local) {
    return fmt::format(
        "start it on one machine: mpirun --oversubscribe -np {} burst run {} (burst launch {} prints the line)",
        layout.ranks, plan_path, plan_path);
  }
  return fmt::format(
      "start one host per plan node: mpirun -np {} --map-by ppr:{}:node --hostfile HOSTS burst run {}, "
      "or srun from `burst launch {} --slurm`",
      layout.ranks, layout.ranks_per_node, plan_path, plan_path);
}

}  // namespace

PlanLayout plan_layout(const plan::Plan& plan) {
  PlanLayout layout;
  layout.ranks = static_cast<int>(plan.ranks.size());
  std::map<int, int> per_node;
  for (const plan::RankPlacement& r : plan.ranks) ++per_node[r.node];
  layout.nodes = static_cast<int>(per_node.size());
  for (const auto& [node, count] : per_node) layout.ranks_per_node = std::max(layout.ranks_per_node, count);
  // Read without trusting the plan's reader to have checked it (a plan built in code): a name
  // that is not a string is not "local".
  const auto name = plan.cluster.is_object() ? plan.cluster.find("name") : plan.cluster.end();
  layout.local = name != plan.cluster.end() && name->is_string() && name->get<std::string>() == "local";
  layout.topology = plan.topology_name;
  return layout;
}

std::string check_placement(const plan::Plan& plan, const std::vector<JobRank>& job, const std::string& plan_path) {
  if (job.size() != plan.ranks.size() || job.empty()) return {};
  const PlanLayout layout = plan_layout(plan);
  std::vector<std::string> hosts;  // in order of first rank
  for (const JobRank& r : job) {
    if (std::find(hosts.begin(), hosts.end(), r.host) == hosts.end()) hosts.push_back(r.host);
  }
  if (hosts.size() == 1) {
    if (layout.local || layout.nodes == 1) return {};
    return fmt::format(
        "placement: the plan's {} nodes ({}) run on one host, '{}': a simulation of the cluster on one "
        "machine, not its placement",
        layout.nodes, layout.topology, hosts.front());
  }
  const std::string hint = launch_hint(layout, plan_path);
  std::map<int, int> first_rank_of_node;    // plan node -> its first rank
  std::map<std::string, int> node_of_host;  // host -> the first plan node seen on it
  for (const plan::RankPlacement& p : plan.ranks) {
    const JobRank& here = job[static_cast<std::size_t>(p.rank)];
    const auto [first, inserted] = first_rank_of_node.emplace(p.node, p.rank);
    const JobRank& first_here = job[static_cast<std::size_t>(first->second)];
    if (!inserted && first_here.host != here.host) {
      throw Error(Problem{"placement",
                          fmt::format("rank {} runs on host '{}', but the plan puts it on node {} with rank {}, which "
                                      "runs on host '{}'",
                                      p.rank, here.host, p.node, first->second, first_here.host),
                          "the ranks of each plan node on one host", hint});
    }
    if (layout.local) continue;
    const auto [host_node, new_host] = node_of_host.emplace(here.host, p.node);
    if (!new_host && host_node->second != p.node) {
      throw Error(Problem{"placement",
                          fmt::format("rank {} runs on host '{}' with ranks of plan node {}, but the plan puts it on "
                                      "node {}: two nodes' ranks would share one node's {} GPUs",
                                      p.rank, here.host, host_node->second, p.node, layout.ranks_per_node),
                          "one plan node per host", hint});
    }
    if (here.local_rank != p.local) {
      throw Error(
          Problem{"placement",
                  fmt::format("rank {} is local rank {} on host '{}', but the plan puts it on GPU {} of node {}",
                              p.rank, here.local_rank, here.host, p.local, p.node),
                  "ranks placed in order on each host (local rank = the plan's GPU)", hint});
    }
  }
  if (!layout.local) return {};
  return fmt::format("placement: the plan's {} virtual nodes run on {} hosts", layout.nodes, hosts.size());
}

}  // namespace burst::launch
