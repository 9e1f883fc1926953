// The plan checks of `burst run` (see run_plan_check.hpp).
#include "tools/burst/run_plan_check.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "simulator/attention/families.hpp"
#include "topologies/json_format.hpp"

namespace burst::cli {

void check_plan_cluster(const plan::Plan& plan, const std::string& path) {
  (void)sim::family_traits(plan.strategy.name, path + ":/strategy/name");
  if (!plan.cluster.is_object()) {
    throw Error(Problem{path + ":/cluster", "the plan carries no cluster, so nothing vouches for its placement",
                        "the burst.topology/1 document the plan was made for",
                        "write the plan with `burst plan`, which stores its cluster"});
  }
  const topo::Topology cluster = topo::parse_topology_json(plan.cluster, path + ":/cluster");
  const std::string hash = cluster.hash();
  if (plan.topology_hash != hash) {
    throw Error(Problem{path + ":/meta/topology_hash",
                        fmt::format("'{}' is not the hash of the plan's /cluster ({})", plan.topology_hash, hash), hash,
                        "the cluster or the hash was changed after planning: plan again with `burst plan`"});
  }
  Problems problems;
  for (std::size_t i = 0; i < plan.ranks.size(); ++i) {
    const plan::RankPlacement& r = plan.ranks[i];
    const std::string at = fmt::format("{}:/world/ranks/{}", path, i);
    if (r.node >= cluster.nodes()) {
      problems.add(
          at + "/node",
          fmt::format("rank {} is on node {}, and the plan's cluster has {} nodes", r.rank, r.node, cluster.nodes()),
          fmt::format("0 to {}", cluster.nodes() - 1));
    }
    if (r.local >= cluster.gpus_per_node()) {
      problems.add(at + "/local",
                   fmt::format("rank {} is on GPU {} of its node, and the plan's cluster has {} a node", r.rank,
                               r.local, cluster.gpus_per_node()),
                   fmt::format("0 to {}", cluster.gpus_per_node() - 1));
    }
  }
  problems.throw_if_any();
}

}  // namespace burst::cli
