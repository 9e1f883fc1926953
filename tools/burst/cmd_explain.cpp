// burst explain plan.json: why the plan won, what binds it, what the runner-up would need.
#include <fmt/format.h>

#include "plan/plan.hpp"
#include "planner/explain.hpp"
#include "tools/burst/commands.hpp"

namespace burst::cli {

void add_explain_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("explain", "Explain a plan: why it won, the binding constraint, the runner-up");
  cmd->add_option("plan", *path, "A plan file (burst.plan/2)")->required();
  cmd->callback([path] { fmt::print("{}", planner::explain_plan(plan::read_plan(*path))); });
}

}  // namespace burst::cli
