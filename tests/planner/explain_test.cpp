// `burst explain` from a plan alone: why it won, the binding constraint, the runner-up.
#include <catch2/catch.hpp>

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

TEST_CASE("under a tight budget explain says memory binds", "[explain]") {
  // Squeeze the budget to just above the chosen plan's need: memory is then the constraint.
  const plan::Plan loose = made();
  const double gib = loose.predicted.memory_total_bytes / (1024.0 * 1024 * 1024);
  const plan::Plan tight = made(gib * 1.01);
  const std::string text = planner::explain_plan(tight);
  CHECK_THAT(text, Catch::Contains("memory binds"));
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
