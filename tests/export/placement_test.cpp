// The placement check of `burst run` with synthetic hosts: one host simulates any plan; on
// several hosts each plan node needs its own host (GPU topologies) with ranks in GPU order.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "common/error.hpp"
#include "planner/launch/placement.hpp"

using namespace burst;
using launch::JobRank;

namespace {

// A plan of `nodes` x `per_node` ranks, rank r on node r / per_node, GPU r % per_node.
plan::Plan placed_plan(int nodes, int per_node, const std::string& topology) {
  plan::Plan p;
  p.topology_name = topology + " x" + std::to_string(nodes);
  p.cluster = Json{{"schema", "burst.topology/1"}, {"name", topology}, {"nodes", nodes}};
  for (int r = 0; r < nodes * per_node; ++r) p.ranks.push_back({r, r / per_node, r % per_node});
  return p;
}

// Ranks in order, `per_host` on each of hosts h0, h1, ...
std::vector<JobRank> by_slot(int ranks, int per_host) {
  std::vector<JobRank> job(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    JobRank& rank = job[static_cast<std::size_t>(r)];
    rank.host = fmt::format("h{}", r / per_host);
    rank.local_rank = r % per_host;
  }
  return job;
}

std::string refusal(const plan::Plan& p, const std::vector<JobRank>& job) {
  try {
    (void)launch::check_placement(p, job, "plan.json");
  } catch (const Error& e) {
    REQUIRE(e.problems().size() == 1);
    return e.problems()[0].to_string();
  }
  return {};
}

}  // namespace

TEST_CASE("one host runs any plan: a simulation of a cluster says so, a local plan says nothing") {
  CHECK(launch::check_placement(placed_plan(2, 2, "local"), by_slot(4, 4), "plan.json").empty());
  const std::string note = launch::check_placement(placed_plan(4, 8, "a800-4hca"), by_slot(32, 32), "plan.json");
  CHECK_THAT(note, Catch::Contains("the plan's 4 nodes (a800-4hca x4) run on one host, 'h0'"));
  CHECK(launch::check_placement(placed_plan(1, 8, "dgx-h100"), by_slot(8, 8), "plan.json").empty());
}

TEST_CASE("one host per plan node, ranks in GPU order: accepted silently") {
  CHECK(launch::check_placement(placed_plan(4, 8, "a800-4hca"), by_slot(32, 8), "plan.json").empty());
}

TEST_CASE("a plan node split over two hosts is refused, naming the rank, its host and the plan's node") {
  // 6 ranks a host: node 0's ranks 6 and 7 land on the second host.
  const std::string message = refusal(placed_plan(4, 8, "a800-4hca"), by_slot(32, 6));
  CHECK_THAT(message, Catch::StartsWith("placement: rank 6 runs on host 'h1', but the plan puts it on node 0 with rank "
                                        "0, which runs on host 'h0'"));
  CHECK_THAT(message, Catch::Contains("mpirun -np 32 --map-by ppr:8:node --hostfile HOSTS burst run plan.json"));
}

TEST_CASE("two plan nodes on one host of a GPU cluster are refused; on the local topology they are not") {
  // 16 ranks a host: nodes 0 and 1 share host h0's GPUs.
  const std::string message = refusal(placed_plan(4, 8, "a800-4hca"), by_slot(32, 16));
  CHECK_THAT(message,
             Catch::Contains("rank 8 runs on host 'h0' with ranks of plan node 0, but the plan puts it on node 1"));
  const std::string note = launch::check_placement(placed_plan(4, 2, "local"), by_slot(8, 4), "plan.json");
  CHECK_THAT(note, Catch::Contains("the plan's 4 virtual nodes run on 2 hosts"));
}

TEST_CASE("a rank driving another GPU than the plan's is refused") {
  std::vector<JobRank> job = by_slot(16, 8);
  std::swap(job[1].local_rank, job[2].local_rank);
  const std::string message = refusal(placed_plan(2, 8, "dgx-h100"), job);
  CHECK_THAT(message, Catch::Contains("rank 1 is local rank 2 on host 'h0', but the plan puts it on GPU 1 of node 0"));
}

TEST_CASE("another rank count is left to the rank-count check") {
  CHECK(launch::check_placement(placed_plan(4, 8, "a800-4hca"), by_slot(16, 8), "plan.json").empty());
}
