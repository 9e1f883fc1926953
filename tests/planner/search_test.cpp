// The search: determinism, what the chosen plan must satisfy, the alternatives it reports,
// and the properties a planner must have (more memory never slower; scaling in a sane band).
#include <catch2/catch.hpp>

#include "planner/plan_builder.hpp"
#include "planner/search/candidates.hpp"
#include "tests/planner/planner_fixture.hpp"
#include "tests/support/error_text.hpp"

using namespace burst;
using burst::test::preset;
using burst::test::request;

TEST_CASE("the chosen plan is feasible and the fastest feasible family", "[search]") {
  const auto topology = preset("a800-4hca", 2);
  const auto result = planner::search(request("burst-7b", "256K"), topology);
  REQUIRE(result.chosen_plan() != nullptr);
  const auto& chosen = *result.chosen_plan();
  CHECK(chosen.feasible);
  CHECK(chosen.sim.memory.total() <= result.memory_budget_bytes);
  CHECK(result.memory_budget_bytes == topology.gpu().memory_bytes);
  REQUIRE(result.best_per_family.size() == sim::family_names().size());
  for (const auto& e : result.best_per_family) {
    if (e.feasible) CHECK(e.sim.tokens_per_s_per_gpu <= chosen.sim.tokens_per_s_per_gpu);
    if (!e.feasible) CHECK_FALSE(e.reason.empty());
  }
  CHECK(result.candidates_evaluated > static_cast<int>(sim::family_names().size()));
}

TEST_CASE("the same input gives the same plan, byte for byte", "[search]") {
  const auto topology = preset("a800-4hca", 2);
  const auto r = request("burst-7b", "256K");
  const auto a = plan::to_json(planner::build_plan(planner::search(r, topology), r, topology)).dump();
  const auto b = plan::to_json(planner::build_plan(planner::search(r, topology), r, topology)).dump();
  CHECK(a == b);
}

TEST_CASE("a plan lists every family and rings that cover the world", "[search]") {
  const auto topology = preset("a800-4hca", 2);
  const auto r = request("burst-7b", "256K");
  const plan::Plan p = planner::build_plan(planner::search(r, topology), r, topology);
  CHECK(p.alternatives.size() == sim::family_names().size());
  CHECK(static_cast<int>(p.ranks.size()) == topology.gpu_count());
  CHECK(p.strategy.tp * p.strategy.cp * p.strategy.ulysses == topology.gpu_count());
  CHECK(p.strategy.inner * p.strategy.outer == p.strategy.cp);
  // Every world rank appears in exactly one ring of each level.
  std::map<std::string, std::vector<int>> seen;
  for (const auto& ring : p.rings) {
    for (const int rank : ring.order) seen[ring.level].push_back(rank);
  }
  for (auto& [level, ranks] : seen) {
    std::sort(ranks.begin(), ranks.end());
    CHECK(ranks.size() == static_cast<std::size_t>(topology.gpu_count()));
    CHECK(std::adjacent_find(ranks.begin(), ranks.end()) == ranks.end());
  }
  // The plan's prediction is the chosen family's alternative entry.
  const auto it = std::find_if(p.alternatives.begin(), p.alternatives.end(),
                               [&](const plan::Alternative& a) { return a.strategy.name == p.strategy.name; });
  REQUIRE(it != p.alternatives.end());
  CHECK(it->predicted.step_time_s == p.predicted.step_time_s);
}

TEST_CASE("--strategy restricts the choice to one family", "[search]") {
  const auto topology = preset("a800-4hca", 2);
  auto r = request("burst-7b", "256K");
  r.only_family = "megatron-cp";
  const auto result = planner::search(r, topology);
  REQUIRE(result.chosen_plan() != nullptr);
  CHECK(result.chosen_plan()->family == "megatron-cp");
}

TEST_CASE("a bigger memory budget never yields a slower chosen plan", "[search][property][scale]") {
  const auto topology = preset("a800-4hca", 2);
  double previous = 0;
  for (const double gib : {24.0, 32.0, 48.0, 64.0, 80.0}) {
    auto r = request("burst-7b", "512K");
    r.memory_budget_bytes = gib * 1024 * 1024 * 1024;
    const auto result = planner::search(r, topology);
    const double speed = result.chosen_plan() != nullptr ? result.chosen_plan()->sim.tokens_per_s_per_gpu : 0;
    INFO("budget " << gib << " GiB");
    CHECK(speed >= previous);
    previous = speed;
  }
  CHECK(previous > 0);
}

TEST_CASE("adding nodes at fixed tokens per GPU keeps throughput per GPU in a sane band", "[search][property][scale]") {
  // 32K tokens per GPU throughout: the attention work per GPU grows with the ring (each rank
  // sees the whole sequence), so per-GPU tokens/s may fall, but not collapse or jump.
  const auto r1 = request("burst-7b", "256K");
  const double base = planner::search(r1, preset("a800-4hca", 1)).chosen_plan()->sim.tokens_per_s_per_gpu;
  for (const auto& [nodes, seq] : std::vector<std::pair<int, std::string>>{{2, "512K"}, {4, "1M"}}) {
    const auto result = planner::search(request("burst-7b", seq), preset("a800-4hca", nodes));
    REQUIRE(result.chosen_plan() != nullptr);
    const double ratio = result.chosen_plan()->sim.tokens_per_s_per_gpu / base;
    INFO(nodes << " nodes: " << ratio << " of one node's tokens/s per GPU");
    // Attention is quadratic: at fixed tokens per GPU its work per GPU grows with the node
    // count, so the ratio falls roughly as 1/nodes once attention dominates, never faster.
    CHECK(ratio <= 1.05);
    CHECK(ratio >= 0.8 / nodes);
  }
}

TEST_CASE("nothing fits an impossible budget, and the best of each family says by how much", "[search]") {
  const auto topology = preset("a800-4hca", 1);
  auto r = request("burst-7b", "256K");
  r.memory_budget_bytes = 1024.0 * 1024 * 1024;
  const auto result = planner::search(r, topology);
  CHECK(result.chosen_plan() == nullptr);
  for (const auto& e : result.best_per_family) {
    CHECK_FALSE(e.feasible);
    if (e.sim.not_applicable.empty()) CHECK_THAT(e.reason, Catch::Contains("budget 1.0 GiB"));
  }
}

TEST_CASE("--memory-margin keeps that much of the budget free: a plan that fits only without it is refused",
          "[search]") {
  const auto topology = preset("a800-4hca", 2);
  const auto plain = planner::search(request("burst-7b", "256K"), topology);
  REQUIRE(plain.chosen_plan() != nullptr);
  const double spare = plain.memory_budget_bytes - plain.chosen_plan()->sim.memory.total();
  REQUIRE(spare > 0);
  auto r = request("burst-7b", "256K");
  r.memory_margin_bytes = spare + 1;  // one byte more than the plain choice leaves
  const auto margined = planner::search(r, topology);
  for (const auto& e : margined.best_per_family) {
    if (e.feasible) CHECK(e.sim.memory.total() <= margined.memory_budget_bytes - r.memory_margin_bytes);
    if (!e.feasible && e.sim.not_applicable.empty()) CHECK_THAT(e.reason, Catch::Contains("margin"));
  }
  if (const auto* chosen = margined.chosen_plan()) {
    CHECK(chosen->sim.memory.total() < plain.chosen_plan()->sim.memory.total());
  }
}

TEST_CASE("a fixed checkpoint policy prices every family with it, peers and searched alike", "[search]") {
  const auto topology = preset("a800-4hca", 2);
  for (const CheckpointPolicy policy : {CheckpointPolicy::AttnStash, CheckpointPolicy::None}) {
    INFO(to_string(policy));
    auto r = request("burst-7b", "256K");
    r.checkpoint = policy;
    const auto result = planner::search(r, topology);
    int priced = 0;
    for (const auto& e : result.best_per_family) {
      if (!e.sim.not_applicable.empty()) continue;
      INFO(e.family);
      CHECK(e.sim.strategy.checkpoint.policy == policy);
      ++priced;
    }
    CHECK(priced >= 5);
    // The plan records it, and a replan (burst report's scaling, burst capacity) prices alike.
    const plan::Plan p = planner::build_plan(result, r, topology);
    CHECK(p.job.only_checkpoint == to_string(policy));
    CHECK(planner::replan_request(p).checkpoint == policy);
  }
  // Unset, the peers keep their own: LoongTrain recomputes every layer, Megatron-CP none.
  const auto own = planner::search(request("burst-7b", "256K"), topology);
  for (const auto& e : own.best_per_family) {
    if (e.family.starts_with("loongtrain")) CHECK(e.sim.strategy.checkpoint.policy == CheckpointPolicy::Full);
    if (e.family == "megatron-cp") CHECK(e.sim.strategy.checkpoint.policy == CheckpointPolicy::None);
  }
}

TEST_CASE("the step budget caps the candidates scored and still reports every family", "[search]") {
  auto r = request("burst-7b", "256K");
  r.max_candidates = 10;
  const auto result = planner::search(r, preset("a800-4hca", 2));
  CHECK(result.stopped_at_budget);
  CHECK(result.candidates_evaluated <= 10 + static_cast<int>(sim::family_names().size()));
  CHECK(result.best_per_family.size() == sim::family_names().size());
}

TEST_CASE("unknown families get a did-you-mean", "[search]") {
  CHECK(test::error_text([&] { (void)sim::family_traits("brust", "--strategy"); }) ==
        "--strategy: unknown strategy 'brust' (valid: burst, burst-usp, megatron-cp, ds-ulysses, "
        "loongtrain-double-ring, loongtrain-usp, ring; hint: did you mean 'burst'?)");
}

TEST_CASE("tensor parallelism is searched inside NVLink nodes, in degrees that split the heads", "[search][tp]") {
  const auto dgx = preset("dgx-h100", 16);
  planner::SearchRequest r = request("llama3-8b", "128K");
  CHECK(planner::tensor_parallel_degrees(r.job, dgx) == std::vector<int>{1, 2, 4, 8});
  CHECK(planner::tensor_parallel_degrees(r.job, preset("pcie-8gpu", 2)) == std::vector<int>{1});  // no NVLink
  r.job.model.kv_heads = 2;  // a degree must split the KV heads too
  CHECK(planner::tensor_parallel_degrees(r.job, dgx) == std::vector<int>{1, 2});
}

// [scale]: two searches over 128 GPUs, 10 s under the sanitizers.
TEST_CASE("tensor parallelism pays where the sequence is spread thin", "[search][tp][scale]") {
  const auto dgx = preset("dgx-h100", 16);
  // A Llama-3-70B-shaped model at 128K on 128 H100s: 1K tokens a GPU without tensor parallelism,
  // where the rings cannot hide behind so little attention; 8 GPUs a rank keep 8K a rank.
  planner::SearchRequest big = request("llama3-8b", "128K");
  big.job.model = ModelSpec{"llama3-70b-shaped", 80, 8192, 28672, 64, 8, 128, 128256, true, "silu"};
  big.only_tp = 1;
  const planner::SearchResult without = planner::search(big, dgx);
  big.only_tp = 0;
  const planner::SearchResult with = planner::search(big, dgx);
  REQUIRE(without.chosen_plan() != nullptr);
  REQUIRE(with.chosen_plan() != nullptr);
  CHECK(without.chosen_plan()->sim.strategy.tp == 1);
  CHECK(with.chosen_plan()->sim.strategy.tp > 1);
  INFO("MFU " << without.chosen_plan()->sim.mfu << " without, " << with.chosen_plan()->sim.mfu << " with");
  CHECK(with.chosen_plan()->sim.mfu > 2 * without.chosen_plan()->sim.mfu);
}

TEST_CASE("data parallelism is searched where the batch allows it, and pays where sequences are short",
          "[search][dp]") {
  const auto topology = preset("a800-4hca", 4);
  auto r = request("burst-7b", "32K");
  r.job.batch = 16;
  r.only_tp = 1;
  const auto result = planner::search(r, topology);
  REQUIRE(result.chosen_plan() != nullptr);
  CHECK_FALSE(result.stopped_at_budget);
  const auto& chosen = result.chosen_plan()->sim;
  CHECK(chosen.strategy.dp > 1);
  CHECK(r.job.batch % (chosen.strategy.dp * chosen.strategy.micro_batch) == 0);
  // The same search held to one replica: one ring over all 32 GPUs, slower.
  auto one_replica = r;
  one_replica.only_dp = 1;
  const auto flat = planner::search(one_replica, topology);
  REQUIRE(flat.chosen_plan() != nullptr);
  CHECK(flat.chosen_plan()->sim.strategy.dp == 1);
  CHECK(chosen.tokens_per_s_per_gpu > 1.2 * flat.chosen_plan()->sim.tokens_per_s_per_gpu);
  // One sequence a step leaves nothing to replicate.
  r.job.batch = 1;
  for (const auto& e : planner::search(r, topology).best_per_family) CHECK(e.sim.strategy.dp == 1);
}
