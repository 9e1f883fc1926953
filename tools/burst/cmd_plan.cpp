// burst plan: choose the fastest plan that fits in memory, among every strategy family (or
// one), and write it as burst.plan/2. The ranked table is for people: on stdout, or on stderr
// when --json puts the plan on stdout. "No plan fits" is an answer, given as an error so
// scripts notice: the table above it says what each family would need.
#include <fmt/format.h>

#include "common/escape.hpp"
#include "plan/plan.hpp"
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
  fmt::print(people, "{}\n\n", jobs::describe_planning(p));
  print_ranked_table(people, result);
  const plan::Plan made = jobs::build_chosen_plan(result, p);
  if (!o.output.empty()) {
    plan::write_plan(made, o.output);
    fmt::print(stderr, "plan written to {} (burst explain {} says why)\n", escape::terminal(o.output),
               escape::shell_word(o.output));
  }
  if (o.json) fmt::print("{}\n", plan::to_json(made).dump(2));
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto options = std::make_shared<PlanCommandOptions>();
  CLI::App* cmd = app.add_subcommand("plan", "Choose the fastest plan that fits in memory and write plan.json");
  add_plan_options(*cmd, options->plan);
  cmd->add_option("-o,--output", options->output, "Write the plan (burst.plan/2) to this file");
  cmd->add_flag("--json", options->json, "Print the plan as JSON on stdout (the table goes to stderr)");
  cmd->callback([options] { run(*options); });
}

}  // namespace burst::cli
