// burst plan: choose the fastest plan that fits in memory, among every strategy family (or
// one), and write it as burst.plan/1. The ranked table is for people: on stdout, or on stderr
// when --json puts the plan on stdout. "No plan fits" is an answer, given as an error so
// scripts notice: the table above it says what each family would need.
#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/units.hpp"
#include "planner/contract/plan.hpp"
#include "planner/plan_builder.hpp"
#include "tools/burst/commands.hpp"
#include "tools/burst/plan_options.hpp"
#include "tools/burst/plan_table.hpp"

namespace burst::cli {
namespace {

struct PlanCommandOptions {
  PlanOptions plan;
  std::string output;
  bool json = false;
};

void run(const PlanCommandOptions& o) {
  const PlanningJob p = resolve_planning(o.plan);
  const planner::SearchResult result = planner::search(p.request, *p.job.topology);
  std::FILE* people = o.json ? stderr : stdout;
  fmt::print(people, "{}\n\n", describe_job(p.job));
  print_ranked_table(people, result);
  if (result.chosen_plan() == nullptr) {
    const bool none_runs = std::all_of(result.best_per_family.begin(), result.best_per_family.end(),
                                       [](const planner::Evaluated& e) { return !e.sim.not_applicable.empty(); });
    if (none_runs) {
      std::vector<Problem> problems;
      for (const auto& e : result.best_per_family) problems.push_back({e.family, e.sim.not_applicable, "", ""});
      throw Error(std::move(problems));
    }
    const std::string scope = o.plan.strategy.empty() ? "no strategy" : "'" + o.plan.strategy + "'";
    throw Error(Problem{"--memory-budget",
                        fmt::format("no plan fits: {} runs in {} per GPU on {} GPUs", scope,
                                    units::human_bytes(result.memory_budget_bytes), p.job.topology->gpu_count()),
                        "", "more nodes (see burst capacity), a larger --memory-budget, or a shorter --seq"});
  }
  const plan::Plan made = planner::build_plan(result, p.request, *p.job.topology);
  if (!o.output.empty()) {
    plan::write_plan(made, o.output);
    fmt::print(stderr, "plan written to {} (burst explain {} says why)\n", o.output, o.output);
  }
  if (o.json) fmt::print("{}\n", plan::to_json(made).dump(2));
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto options = std::make_shared<PlanCommandOptions>();
  CLI::App* cmd = app.add_subcommand("plan", "Choose the fastest plan that fits in memory and write plan.json");
  add_plan_options(*cmd, options->plan);
  cmd->add_option("-o,--output", options->output, "Write the plan (burst.plan/1) to this file");
  cmd->add_flag("--json", options->json, "Print the plan as JSON on stdout (the table goes to stderr)");
  cmd->callback([options] { run(*options); });
}

}  // namespace burst::cli
