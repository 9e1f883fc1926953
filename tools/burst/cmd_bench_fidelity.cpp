// burst bench fidelity: the simulator's predictions beside published measurements, with the
// error of the model as it is and of the kernels-only model it grew from
// (simulator/fidelity/fidelity.hpp). Rows used to set a constant of the default calibration
// ("fit") are summarised apart from the held-out rest. --markdown prints the table that
// docs/fidelity.md holds.
#include <cmath>

#include <fmt/format.h>

#include "common/json_reader.hpp"
#include "simulator/fidelity/fidelity.hpp"
#include "simulator/fidelity/layout_fidelity.hpp"
#include "tools/burst/commands.hpp"

namespace burst::cli {
namespace {

struct BenchFidelityOptions {
  bool json = false;
  bool markdown = false;
  bool layouts = false;
};

std::string percent(double error) { return fmt::format("{:+.0f}%", 100 * error); }

Json row_json(const sim::FidelityRow& r) {
  Json j = {{"id", r.figure.id},         {"gpu", r.figure.gpu},
            {"gpus", r.figure.gpus},     {"method", r.figure.method},
            {"layout", r.figure.layout}, {"mask", r.figure.mask},
            {"phase", r.figure.phase},   {"role", r.figure.fit ? "fit" : "held_out"},
            {"source", r.figure.source}};
  if (!r.skipped.empty()) {
    j["skipped"] = r.skipped;
    return j;
  }
  j["tokens_per_gpu"] = r.tokens_per_gpu;
  j["measured_s"] = r.measured_s;
  j["kernels_only_s"] = r.kernels_only_s;
  j["predicted_s"] = r.predicted_s;
  j["error"] = r.error();
  j["kernels_only_error"] = r.kernels_only_error();
  return j;
}

// Mean |error| over the predicted rows of one role: (kernels only, now, count).
struct Summary {
  double before = 0, now = 0;
  int count = 0;
};
Summary summarise(const std::vector<sim::FidelityRow>& rows, bool fit) {
  Summary s;
  for (const auto& r : rows) {
    if (!r.skipped.empty() || r.figure.fit != fit) continue;
    s.before += std::abs(r.kernels_only_error());
    s.now += std::abs(r.error());
    ++s.count;
  }
  if (s.count > 0) {
    s.before /= s.count;
    s.now /= s.count;
  }
  return s;
}

void print_table(const std::vector<sim::FidelityRow>& rows, bool markdown) {
  const char* bar = markdown ? "|" : " ";
  fmt::print(
      "{0} figure {0} GPUs {0} tokens/GPU {0} mask {0} layout {0} phase {0} measured {0} kernels only {0} now {0} role "
      "{0}\n",
      bar);
  if (markdown) fmt::print("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& r : rows) {
    if (!r.skipped.empty()) continue;
    const auto& f = r.figure;
    fmt::print(
        "{0} {1} {0} {2}x {3} {0} {4}K {0} {5} {0} {6} {0} {7} {0} {8:.2f} ms {0} {9:.2f} ms ({10}) {0} "
        "{11:.2f} ms ({12}) {0} {13} {0}\n",
        bar, f.id, f.gpus, f.gpu, r.tokens_per_gpu / 1024, f.mask, f.layout, f.phase, r.measured_s * 1e3,
        r.kernels_only_s * 1e3, percent(r.kernels_only_error()), r.predicted_s * 1e3, percent(r.error()),
        f.fit ? "fit" : "held out");
  }
  for (const bool fit : {true, false}) {
    const Summary s = summarise(rows, fit);
    fmt::print("\n{} rows ({}): mean |error| kernels only {:.1f}%, now {:.1f}%\n", fit ? "fit" : "held-out", s.count,
               100 * s.before, 100 * s.now);
  }
  int skipped = 0;
  for (const auto& r : rows) skipped += r.skipped.empty() ? 0 : 1;
  fmt::print("{} attention figures not predicted (--json says why for each)\n", skipped);
}

Json layout_json(const sim::LayoutFidelityRow& r) {
  const auto& l = r.layout;
  Json j = {{"id", l.id},
            {"model", l.model},
            {"gpus", l.gpus},
            {"seq", l.seq},
            {"tp", l.tp},
            {"cp", l.cp},
            {"pp", l.pp},
            {"dp", l.dp},
            {"metric", l.metric},
            {"measured", l.value},
            {"precision", l.precision},
            {"layout", l.layout ? to_string(*l.layout) : "the family's"},
            {"role", l.fit ? "fit" : "held_out"},
            {"source", l.source}};
  if (l.flop_count) j["flop_count"] = sim::to_string(*l.flop_count);
  if (l.memory_gib > 0) j["measured_memory_gib"] = l.memory_gib;
  if (!r.skipped.empty()) {
    j["skipped"] = r.skipped;
    return j;
  }
  j["simulated"] = r.strategy;
  j["predicted"] = r.predicted();
  j["error"] = r.error();
  j["predicted_tflops_per_gpu"] = r.predicted_tflops_per_gpu;
  j["predicted_tokens_per_s_per_gpu"] = r.predicted_tokens_per_s_per_gpu;
  j["predicted_memory_gib"] = r.predicted_memory_gib;
  return j;
}

// The layouts table: each row's metric measured and predicted, and, within a sweep (consecutive
// rows of one model, family, metric and checkpointing), both relative to the sweep's first
// predicted row.
void print_layouts(const std::vector<sim::LayoutFidelityRow>& rows, bool markdown) {
  const char* bar = markdown ? "|" : " ";
  fmt::print(
      "{0} run {0} GPUs {0} seq {0} TP x CP x DP {0} simulated {0} measured {0} predicted {0} error {0} "
      "trend measured {0} trend predicted {0} memory measured / predicted {0}\n",
      bar);
  if (markdown) fmt::print("|---|---|---|---|---|---|---|---|---|---|---|\n");
  const sim::LayoutFidelityRow* first = nullptr;
  int skipped = 0;
  for (const auto& r : rows) {
    const auto& l = r.layout;
    if (!r.skipped.empty()) {
      ++skipped;
      continue;
    }
    if (first == nullptr || first->layout.model != l.model || first->layout.family != l.family ||
        first->layout.metric != l.metric || first->layout.checkpoint != l.checkpoint) {
      first = &r;
    }
    const std::string unit = l.metric == "tokens_per_s_per_gpu" ? "tokens/s" : "TFLOP/s";
    const std::string memory =
        l.memory_gib > 0 ? fmt::format("{:.1f} / {:.1f} GiB", l.memory_gib, r.predicted_memory_gib) : "-";
    fmt::print(
        "{0} {1} ({2}) {0} {3} {0} {4}K {0} {5} x {6} x {7} {0} {8} {0} {9:.0f} {10} {0} {11:.0f} {0} {12} {0} "
        "{13:.2f} {0} {14:.2f} {0} {15} {0}\n",
        bar, l.id, l.precision, l.gpus, l.seq / 1024, l.tp, l.cp, l.dp, r.strategy, l.value, unit, r.predicted(),
        percent(r.error()), l.value / first->layout.value, r.predicted() / first->predicted(), memory);
  }
  fmt::print("\n{} published layouts not predicted (--json says why for each)\n", skipped);
}

void run(const BenchFidelityOptions& o) {
  if (o.layouts) {
    const std::vector<sim::LayoutFidelityRow> rows = sim::layout_fidelity_rows();
    if (o.json) {
      Json all = Json::array();
      for (const auto& r : rows) all.push_back(layout_json(r));
      fmt::print("{}\n", all.dump(2));
      return;
    }
    print_layouts(rows, o.markdown);
    return;
  }
  const std::vector<sim::FidelityRow> rows = sim::fidelity_rows();
  if (o.json) {
    Json all = Json::array();
    for (const auto& r : rows) all.push_back(row_json(r));
    fmt::print("{}\n", all.dump(2));
    return;
  }
  print_table(rows, o.markdown);
}

}  // namespace

void add_bench_fidelity_command(CLI::App& bench) {
  auto options = std::make_shared<BenchFidelityOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "fidelity", "Predictions beside published attention measurements (FlashAttention, ring attention), with errors");
  cmd->add_flag("--json", options->json, "Every figure as JSON, with the reason for those not predicted");
  cmd->add_flag("--markdown", options->markdown, "The table as Markdown (docs/fidelity.md)");
  cmd->add_flag("--layouts", options->layouts,
                "Whole training steps instead: published tensor x context x data-parallel runs beside the "
                "iteration model's prediction");
  cmd->callback([options] { run(*options); });
}

}  // namespace burst::cli
