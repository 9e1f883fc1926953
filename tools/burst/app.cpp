// The `burst` command line (see app.hpp).
#include "tools/burst/app.hpp"

#include <string>

#include "tools/burst/commands.hpp"

namespace burst::cli {

std::unique_ptr<CLI::App> make_app() {
  auto app = std::make_unique<CLI::App>(
      "burst: plan, simulate and run long-sequence transformer training across GPU clusters");
  app->set_version_flag("--version", std::string("burst ") + BURST_VERSION);
  app->require_subcommand(1);
  add_topo_command(*app);
  add_simulate_command(*app);
  add_plan_command(*app);
  add_explain_command(*app);
  add_capacity_command(*app);
  add_whatif_command(*app);
  add_report_command(*app);
  add_export_command(*app);
  add_launch_command(*app);
  add_run_command(*app);
  add_calibrate_command(*app);
  add_bench_command(*app);
  CLI::App& bench = *app->get_subcommand("bench");
  add_bench_plan_command(bench);
  add_bench_attention_command(bench);
  add_bench_training_command(bench);
  add_bench_precision_command(bench);
  add_bench_fidelity_command(bench);
  return app;
}

}  // namespace burst::cli
