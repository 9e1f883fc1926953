// The embedded table of published training layouts, parsed once (published_layouts.hpp).
#include "simulator/fidelity/published_layouts.hpp"

#include <stdexcept>
#include <string_view>

#include "common/error.hpp"
#include "simulator/detail/fidelity/csv_table.hpp"
#include "simulator/fidelity/published_figures.hpp"

namespace burst::sim {

extern const std::string_view kPublishedLayoutsCsv;

std::vector<PublishedLayout> parse_published_layouts(const std::string& csv, const std::string& origin) {
  const CsvTable table(
      csv, origin,
      {"id",          "model",  "gpu",        "gpus",   "seq_len",    "global_batch", "micro_batch", "tp",
       "cp",          "pp",     "dp",         "family", "layout",     "checkpoint",   "gradients",   "precision",
       "fp8_library", "metric", "flop_count", "value",  "memory_gib", "source",       "role"});
  std::vector<PublishedLayout> out;
  for (std::size_t r = 0; r < table.rows(); ++r) {
    const auto count = [&](const char* name) { return static_cast<int>(table.number(r, name)); };
    PublishedLayout l;
    l.id = table.text(r, "id");
    l.model = table.text(r, "model");
    l.gpu = table.text(r, "gpu");
    l.gpus = count("gpus");
    l.seq = table.number(r, "seq_len");
    l.global_batch = count("global_batch");
    l.micro_batch = count("micro_batch");
    l.tp = count("tp");
    l.cp = count("cp");
    l.pp = count("pp");
    l.dp = count("dp");
    l.family = table.text(r, "family");
    if (const std::string& layout = table.text(r, "layout"); !layout.empty()) {
      l.layout = parse_layout(layout, table.where(r) + ": layout");
    }
    l.checkpoint = table.text(r, "checkpoint");
    l.gradients = table.one_of(r, "gradients", {"", "bf16", "fp32"}, "empty (the family's), bf16 or fp32");
    l.precision = table.one_of(r, "precision", {"bf16", "fp8"}, "bf16 or fp8 (the linear layers')");
    if (l.precision == "fp8") {
      l.fp8_library = parse_fp8_library(table.text(r, "fp8_library"), table.where(r) + ": fp8_library");
    } else {
      (void)table.one_of(r, "fp8_library", {""}, "empty: the row's linear layers are not FP8");
    }
    l.metric = table.one_of(r, "metric", {"model_tflops_per_gpu", "tokens_per_s_per_gpu"},
                            "model_tflops_per_gpu or tokens_per_s_per_gpu");
    const std::string& flop_count = table.text(r, "flop_count");
    if (l.metric == "model_tflops_per_gpu") {
      l.flop_count = parse_flop_count(flop_count, table.where(r) + ": flop_count");
    } else if (!flop_count.empty()) {
      throw Error(Problem{table.where(r) + ": flop_count", flop_count, "empty: a tokens/s metric counts no FLOPs", ""});
    }
    l.value = table.number(r, "value");
    l.memory_gib = table.number(r, "memory_gib");
    l.source = table.text(r, "source");
    l.fit = fit_role(table.text(r, "role"), table.where(r));
    if (l.gpus != l.tp * l.cp * l.pp * l.dp) {
      throw Error(Problem{table.where(r), "gpus is not tp x cp x pp x dp", "", ""});
    }
    out.push_back(std::move(l));
  }
  return out;
}

const std::vector<PublishedLayout>& published_layouts() {
  static const std::vector<PublishedLayout> layouts = [] {
    try {
      return parse_published_layouts(std::string(kPublishedLayoutsCsv), "published_layouts.csv");
    } catch (const Error& e) {
      throw std::logic_error(std::string("embedded published_layouts.csv: ") + e.what());
    }
  }();
  return layouts;
}

}  // namespace burst::sim
