#include "tools/burst/plan_table.hpp"

#include <fmt/format.h>

#include "common/units.hpp"
#include "tools/jobs/planning.hpp"

namespace burst::cli {

void print_ranked_table(std::FILE* out, const planner::SearchResult& result) {
  const std::vector<const planner::Evaluated*> rows = jobs::ranked_families(result);
  const planner::Evaluated* chosen = result.chosen_plan();
  fmt::print(out, "{:<3} {:<24} {:>3} {:>4} {:>12} {:>7} {:>10} {:>11} {:>10}  {}\n", "#", "strategy", "TP", "DP",
             "tokens/s/GPU", "MFU", "step", "memory/GPU", "exposed", "feasible");
  int rank = 0;
  for (const auto* e : rows) {
    const auto& s = e->sim;
    const std::string mark = e == chosen ? "*" : std::to_string(++rank);
    if (!s.not_applicable.empty()) {
      fmt::print(out, "{:<3} {:<24} {:>3} {:>4} {:>12} {:>7} {:>10} {:>11} {:>10}  no: {}\n", mark, e->family,
                 s.strategy.tp, s.strategy.dp, "-", "-", "-", "-", "-", e->reason);
      continue;
    }
    fmt::print(out, "{:<3} {:<24} {:>3} {:>4} {:>12.1f} {:>6.1f}% {:>10} {:>11} {:>10}  {}\n", mark, e->family,
               s.strategy.tp, s.strategy.dp, s.tokens_per_s_per_gpu, 100 * s.mfu, units::human_duration(s.step_time_s),
               units::human_bytes(s.memory.total()),
               units::human_duration(s.time.attention_exposed_comm + s.time.zero_exposed_comm + s.time.tp_exposed_comm),
               e->feasible ? "yes" : "no: " + e->reason);
  }
  fmt::print(out, "({} candidates scored{}; memory budget {} per GPU; * = chosen)\n\n", result.candidates_evaluated,
             result.stopped_at_budget ? ", stopped at the step budget" : "",
             units::human_bytes(result.memory_budget_bytes));
}

void print_scaling_table(std::FILE* out, const std::vector<planner::ScalingRow>& rows) {
  fmt::print(out, "{:>6} {:>6} {:<24} {:>12} {:>7} {:>10} {:>11}  {}\n", "nodes", "GPUs", "best strategy",
             "tokens/s/GPU", "MFU", "step", "memory/GPU", "fits");
  for (const auto& r : rows) {
    if (r.strategy.empty()) {
      fmt::print(out, "{:>6} {:>6} {:<24} {:>12} {:>7} {:>10} {:>11}  no: {}\n", r.nodes, r.gpus, "-", "-", "-", "-",
                 "-", r.reason);
      continue;
    }
    fmt::print(out, "{:>6} {:>6} {:<24} {:>12.1f} {:>6.1f}% {:>10} {:>11}  {}\n", r.nodes, r.gpus, r.strategy,
               r.tokens_per_s_per_gpu, 100 * r.mfu, units::human_duration(r.step_time_s),
               units::human_bytes(r.memory_total_bytes), r.feasible ? "yes" : "no: " + r.reason);
  }
}

}  // namespace burst::cli
