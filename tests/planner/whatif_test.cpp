// What-if grids: parsing --vary, the grid's order and its CSV.
#include <catch2/catch.hpp>

#include "common/saturating.hpp"
#include "planner/whatif.hpp"
#include "tests/planner/planner_fixture.hpp"
#include "tests/support/error_text.hpp"

using namespace burst;

TEST_CASE("--vary parses knobs and values, and reports every problem at once", "[whatif]") {
  const auto grid = planner::parse_variations({"nodes=1,2", "seq=128K,256K"});
  REQUIRE(grid.size() == 2);
  CHECK(grid[0].knob == "nodes");
  CHECK(grid[1].values == std::vector<std::string>{"128K", "256K"});
  const std::string text = test::error_text([] {
    (void)planner::parse_variations({"node=4", "intra_bw=fast", "nodes=2", "nodes=4", "seq="});
  });
  CHECK_THAT(text, Catch::Contains("unknown knob 'node'"));
  CHECK_THAT(text, Catch::Contains("did you mean 'nodes'?"));
  CHECK_THAT(text, Catch::Contains("--vary intra_bw"));
  CHECK_THAT(text, Catch::Contains("--vary nodes: given twice"));
  CHECK_THAT(text, Catch::Contains("'seq=' has no values"));
}

TEST_CASE("the checkpoint knob prices a family under each policy, own being its launch default", "[whatif]") {
  CHECK_THAT(test::error_text([] { (void)planner::parse_variations({"checkpoint=own,seq_stash"}); }),
             Catch::Contains("--vary checkpoint: seq_stash is burst's own"));
  auto request = test::request("burst-7b", "256K");
  request.only_family = "loongtrain-double-ring";
  const auto points = planner::what_if(request, test::preset("a800-4hca", 2),
                                       planner::parse_variations({"checkpoint=own,full,attn_stash"}));
  REQUIRE(points.size() == 3);
  for (const auto& p : points) REQUIRE(p.outcome.feasible);
  // LoongTrain launches with full recompute: own is full; keeping attention's output is faster.
  CHECK(points[0].outcome.step_time_s == points[1].outcome.step_time_s);
  CHECK(points[2].outcome.step_time_s < points[1].outcome.step_time_s);
  CHECK(points[2].outcome.memory_total_bytes > points[1].outcome.memory_total_bytes);
}

TEST_CASE("the grid's point count saturates instead of wrapping", "[whatif]") {
  const planner::Variation small{"nodes", {"1", "2", "4"}};
  CHECK(planner::grid_points({small, {"seq", {"1K", "2K"}}}) == 6);
  // Five lists of 8192 values (a command line holds them): 2^65 points, which 64 bits wrapped to 0.
  const planner::Variation wide{"nodes", std::vector<std::string>(8192, "4")};
  CHECK(planner::grid_points({wide, wide, wide, wide}) == std::uint64_t{1} << 52);
  CHECK(planner::grid_points({wide, wide, wide, wide, wide}) == kSizeCeiling);
  CHECK(planner::grid_points({wide, wide, wide, wide, wide, small}) == kSizeCeiling);
}

TEST_CASE("the grid is the cartesian product, first knob slowest, and its CSV has a row per point", "[whatif]") {
  const auto topology = test::preset("a800-4hca", 1);
  const auto grid = planner::parse_variations({"nodes=1,2", "nets_per_node=2,4,8"});
  const auto points = planner::what_if(test::request("burst-7b", "128K"), topology, grid);
  REQUIRE(points.size() == 6);
  CHECK(points[0].setting == std::vector<std::pair<std::string, std::string>>{{"nodes", "1"}, {"nets_per_node", "2"}});
  CHECK(points[5].setting == std::vector<std::pair<std::string, std::string>>{{"nodes", "2"}, {"nets_per_node", "8"}});
  CHECK(points[3].outcome.gpus == 16);
  const std::string csv = planner::what_if_csv(points);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 7);
  CHECK_THAT(csv, Catch::StartsWith("nodes,nets_per_node,gpus,strategy,feasible,tokens_per_s_per_gpu"));
}

TEST_CASE("more network ports never make the best plan slower", "[whatif][property][scale]") {
  const auto topology = test::preset("a800-4hca", 4);
  const auto points =
      planner::what_if(test::request("burst-7b", "256K"), topology, planner::parse_variations({"nets_per_node=2,4,8"}));
  REQUIRE(points.size() == 3);
  CHECK(points[1].outcome.tokens_per_s_per_gpu >= points[0].outcome.tokens_per_s_per_gpu);
  CHECK(points[2].outcome.tokens_per_s_per_gpu >= points[1].outcome.tokens_per_s_per_gpu);
}
