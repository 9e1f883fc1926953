// `burst explain` from a plan alone: why it won, the binding constraint, the runner-up.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "planner/explain.hpp"
#include "planner/plan_builder.hpp"
#include "tests/planner/planner_fixture.hpp"

using namespace burst;

namespace {

plan::Plan made(double budget_gib = 0) {
  const auto topology = test::preset("a800-4hca", 2);
  auto r = test::request("burst-7b", "512K");
  r.memory_budget_bytes = budget_gib * 1024 * 1024 * 1024;
  return planner::build_plan(planner::search(r, topology), r, topology);
}

}  // namespace

TEST_CASE("explain names the plan, every other family, the constraint and the runner-up", "[explain]") {
  const plan::Plan p = made();
  const std::string text = planner::explain_plan(p);
  CHECK_THAT(text, Catch::StartsWith("Plan: " + p.strategy.name));
  CHECK_THAT(text, Catch::Contains("Why it won"));
  CHECK_THAT(text, Catch::Contains("Binding constraint"));
  CHECK_THAT(text, Catch::Contains("Runner-up: "));
  for (const auto& a : p.alternatives) {
    if (a.strategy.name != p.strategy.name) CHECK_THAT(text, Catch::Contains(a.strategy.name));
  }
}

TEST_CASE("explain says when every family was checkpointed alike, and only then", "[explain]") {
  plan::Plan p = made();
  CHECK_THAT(planner::explain_plan(p), !Catch::Contains("--checkpoint"));
  p.job.only_checkpoint = "attn_stash";
  CHECK_THAT(planner::explain_plan(p),
             Catch::Contains("every family checkpointed by attn_stash, as --checkpoint asked"));
}

TEST_CASE("explain says when the plan's linear layers are FP8, and only then", "[explain]") {
  plan::Plan p = made();
  CHECK_THAT(planner::explain_plan(p), !Catch::Contains("linear layers"));
  p.job.linears = "fp8";
  CHECK_THAT(planner::explain_plan(p),
             Catch::Contains("linear layers: fp8 GEMMs, priced as TransformerEngine runs them"));
}

TEST_CASE("explain lists the best candidate at each parallel layout, the chosen one first, and the rest's cost",
          "[explain]") {
  // 8 sequences on 2 nodes of 8: tensor-parallel degrees 1-8 x data-parallel 1-8 x micro-batches.
  const auto topology = test::preset("a800-4hca", 2);
  auto r = test::request("burst-7b", "64K");
  r.job.batch = 8;
  const plan::Plan p = planner::build_plan(planner::search(r, topology), r, topology);
  REQUIRE(p.layouts.size() > 4);
  // One entry a layout, best first, the first the plan itself.
  CHECK(p.layouts.front().strategy == p.strategy);
  for (std::size_t i = 0; i < p.layouts.size(); ++i) {
    const plan::Strategy& s = p.layouts[i].strategy;
    for (std::size_t j = 0; j < i; ++j) {
      const plan::Strategy& t = p.layouts[j].strategy;
      CHECK_FALSE((s.tp == t.tp && s.dp == t.dp && s.micro_batch == t.micro_batch));
      if (p.layouts[i].feasible && p.layouts[j].feasible) {
        CHECK(p.layouts[j].predicted.tokens_per_s_per_gpu >= p.layouts[i].predicted.tokens_per_s_per_gpu * (1 - 1e-4));
      }
    }
  }
  const std::string text = planner::explain_plan(p);
  CHECK_THAT(text, Catch::Contains("Why these degrees"));
  const plan::Strategy& second = p.layouts[1].strategy;
  CHECK_THAT(text, Catch::Contains(fmt::format("TP {} x DP {}", p.strategy.tp, p.strategy.dp)));
  CHECK_THAT(text, Catch::Contains(fmt::format("TP {} x DP {}", second.tp, second.dp)));
  CHECK_THAT(text, Catch::Contains("chosen") && Catch::Contains("% step"));
  // The list survives the plan file; a plan from before it says it has none.
  CHECK(plan::plan_from_json(plan::to_json(p), "p.json").layouts == p.layouts);
  Json old = plan::to_json(p);
  old.erase("layouts");
  const plan::Plan before = plan::plan_from_json(old, "old.json");
  CHECK(before.layouts.empty());
  CHECK_THAT(planner::explain_plan(before), Catch::Contains("not recorded: this plan predates the list"));
}

TEST_CASE("under a tight budget explain says memory binds", "[explain]") {
  // Squeeze the budget to just above the chosen plan's need: memory is then the constraint.
  const plan::Plan loose = made();
  const double gib = loose.predicted.memory_total_bytes / (1024.0 * 1024 * 1024);
  const plan::Plan tight = made(gib * 1.01);
  const std::string text = planner::explain_plan(tight);
  CHECK_THAT(text, Catch::Contains("memory binds"));
}

TEST_CASE("a plan's memory margin counts against its budget: named, and binding near the rest", "[explain]") {
  plan::Plan p = made();
  const double need = p.predicted.memory_total_bytes;
  p.job.memory_budget_bytes = 2 * need;
  CHECK_THAT(planner::explain_plan(p), !Catch::Contains("memory binds") && !Catch::Contains("--memory-margin"));
  // The margin leaves just over the plan's need: memory binds, though half the budget is spare.
  p.job.memory_margin_bytes = 2 * need - need * 1.01;
  const std::string text = planner::explain_plan(p);
  CHECK_THAT(text, Catch::Contains("memory binds") && Catch::Contains("free: --memory-margin)"));
}

TEST_CASE("the runner-up's required step time makes it tie with the plan", "[explain]") {
  // ours/theirs tokens/s = theirs/ours step time, so the target step is theirs * (their speed / ours).
  const plan::Plan p = made();
  const std::string text = planner::explain_plan(p);
  CHECK_THAT(text, Catch::Contains("to win it must cut its step") || Catch::Contains("it does not fit"));
}

TEST_CASE("explain shows control characters in a plan's names and reasons, never sends them to the terminal",
          "[explain]") {
  plan::Plan p = made();
  const std::string esc = "\x1b[2J\x1b]0;title\x07";
  p.job.model.name += esc;
  p.topology_name += "\n" + esc;
  p.strategy.name += esc;
  for (auto& a : p.alternatives) {
    a.strategy.name += esc;
    a.reason += esc;
  }
  for (auto& item : p.predicted.time_s) item.name += esc;
  const std::string text = planner::explain_plan(p);
  INFO(text);
  for (const char c : text) CHECK((c == '\n' || static_cast<unsigned char>(c) >= 0x20));
  CHECK_THAT(text, Catch::StartsWith("Plan: "));
  CHECK_THAT(text, Catch::Contains("\\x1b[2J\\x1b]0;title\\x07"));
  CHECK_THAT(text, Catch::Contains("\\n\\x1b[2J"));  // the topology's line break, shown
}
