// burst whatif: the best plan over a grid of cluster and job changes (--vary knob=v1,v2,...),
// as a table with a bar chart of tokens/s per GPU on stdout, and as CSV with -o.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/escape.hpp"
#include "common/saturating.hpp"
#include "common/units.hpp"
#include "planner/whatif.hpp"
#include "common/interrupt.hpp"
#include "tools/burst/cut_short.hpp"
#include "tools/burst/commands.hpp"
#include "tools/burst/work_bounds.hpp"
#include "tools/burst/plan_options.hpp"

namespace burst::cli {
namespace {

struct WhatIfOptions {
  PlanOptions plan;
  std::vector<std::string> vary;
  std::string csv;
  bool force = false;
};

constexpr int kBarWidth = 40;

void print_grid(const std::vector<planner::WhatIfPoint>& points) {
  if (points.empty()) return;  // Ctrl-C before the first point: nothing done, nothing to head
  double best = 0;
  for (const auto& p : points) best = std::max(best, p.outcome.tokens_per_s_per_gpu);
  std::string header;
  for (const auto& [knob, value] : points.front().setting) header += fmt::format("{:<14}", knob);
  fmt::print("{}{:<24} {:>12} {:>7} {:>10} {:>11}  tokens/s per GPU\n", header, "best strategy", "tokens/s/GPU", "MFU",
             "step", "memory/GPU");
  for (const auto& p : points) {
    std::string line;
    for (const auto& [knob, value] : p.setting) line += fmt::format("{:<14}", value);
    const auto& o = p.outcome;
    if (!o.feasible) {
      fmt::print("{}{:<24} does not fit: {}\n", line, o.strategy.empty() ? "-" : o.strategy, o.reason);
      continue;
    }
    const int bar = best > 0 ? static_cast<int>(std::lround(kBarWidth * o.tokens_per_s_per_gpu / best)) : 0;
    fmt::print("{}{:<24} {:>12.1f} {:>6.1f}% {:>10} {:>11}  {}\n", line, o.strategy, o.tokens_per_s_per_gpu,
               100 * o.mfu, units::human_duration(o.step_time_s), units::human_bytes(o.memory_total_bytes),
               std::string(static_cast<std::size_t>(bar), '#'));
  }
}

void run(const WhatIfOptions& o) {
  const auto grid = planner::parse_variations(o.vary);
  const std::uint64_t points_total = planner::grid_points(grid);
  if (points_total >= kSizeCeiling) {  // not even --force runs 2^63 plan searches
    throw Error(Problem{"--vary", "2^63 or more grid points (the sizes of the --vary lists multiplied)",
                        fmt::format("at most {} without --force", kMaxWhatIfPoints),
                        "vary fewer knobs or fewer values"});
  }
  require_bounded("--vary", static_cast<std::int64_t>(points_total), kMaxWhatIfPoints, o.force,
                  "grid points, each a whole plan search", "vary fewer knobs or fewer values");
  fmt::print(stderr, "whatif: {} grid point(s), each a whole plan search\n", points_total);
  const PlanningJob p = resolve_planning(o.plan);
  const InterruptScope ctrl_c;  // Ctrl-C: finish the point in hand, then print and write the points done
  const auto points = planner::what_if(p.request, *p.job.topology, grid);
  fmt::print("{}\n\n", jobs::describe_planning(p));
  print_grid(points);
  if (!o.csv.empty()) {
    write_file_atomically(o.csv, planner::what_if_csv(points), "the what-if grid");
    fmt::print(stderr, "grid written to {}\n", escape::terminal(o.csv));
  }
  if (interrupt_requested()) {
    throw CutShort(fmt::format("whatif: cut short by Ctrl-C after {} of {} grid points; the table{} hold those",
                               points.size(), points_total, o.csv.empty() ? "" : " and " + o.csv));
  }
}

}  // namespace

void add_whatif_command(CLI::App& app) {
  auto options = std::make_shared<WhatIfOptions>();
  CLI::App* cmd = app.add_subcommand("whatif", "Best plan over a grid of cluster and job changes");
  add_plan_options(*cmd, options->plan);
  cmd->add_option("--vary", options->vary,
                  "knob=v1,v2,... (nodes, nets_per_node, intra_bw, seq, memory_budget, tp: the tensor-parallel "
                  "degree); repeat for a grid")
      ->required()
      ->take_all();
  cmd->add_option("-o,--output", options->csv, "Write the grid as CSV to this file");
  cmd->add_flag("--force", options->force, fmt::format("Run a grid of more than {} points", kMaxWhatIfPoints));
  cmd->callback([options] { run(*options); });
}

}  // namespace burst::cli
