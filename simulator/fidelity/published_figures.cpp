// The embedded table of published figures, parsed once (columns by name: csv_table.hpp).
#include "simulator/fidelity/published_figures.hpp"

#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "common/error.hpp"
#include "simulator/detail/fidelity/csv_table.hpp"

namespace burst::sim {

extern const std::string_view kPublishedFiguresCsv;

bool fit_role(const std::string& role, const std::string& where) {
  if (role != "fit" && role != "held_out") {
    throw Error(Problem{where + " role", fmt::format("'{}' is neither fit nor held_out", role), "", ""});
  }
  return role == "fit";
}

std::vector<PublishedFigure> parse_published_figures(const std::string& csv, const std::string& origin) {
  const CsvTable table(csv, origin,
                       {"id", "kind", "gpu", "gpus", "nodes", "heads", "kv_heads", "head_dim", "seq_len", "batch",
                        "mask", "layout", "method", "phase", "metric", "value", "source", "role", "flop_count"});
  std::vector<PublishedFigure> out;
  for (std::size_t r = 0; r < table.rows(); ++r) {
    const auto get = [&](const char* name) -> const std::string& { return table.text(r, name); };
    const auto num = [&](const char* name) { return table.number(r, name); };
    PublishedFigure f;
    f.id = get("id");
    f.kind = get("kind");
    f.gpu = get("gpu");
    f.gpus = static_cast<int>(num("gpus"));
    const double nodes = num("nodes");
    if (table.text(r, "nodes").empty()) {
      f.nodes = 1;
    } else if (nodes < 1 || nodes != static_cast<double>(static_cast<int>(nodes))) {
      throw Error(Problem{table.where(r) + ": nodes", fmt::format("{} is not a node count", nodes), "1, 2, ...", ""});
    } else {
      f.nodes = static_cast<int>(nodes);
    }
    f.heads = static_cast<int>(num("heads"));
    f.kv_heads = static_cast<int>(num("kv_heads"));
    f.head_dim = static_cast<int>(num("head_dim"));
    f.seq = num("seq_len");
    f.batch = static_cast<int>(num("batch"));
    f.mask = get("mask");
    f.layout = get("layout");
    f.method = get("method");
    f.phase = get("phase");
    f.metric = get("metric");
    f.value = num("value");
    f.flop_count = table.one_of(r, "flop_count", {"", "flash_attention"},
                                "empty, or flash_attention (4 b S^2 H D, causal halved, x 3.5 forward + backward)");
    if (!f.flop_count.empty() && f.metric != "tflops_per_gpu") {
      throw Error(Problem{table.where(r) + ": flop_count", "a FLOP count for a " + f.metric + " figure",
                          "a flop_count only on tflops_per_gpu figures", ""});
    }
    f.source = get("source");
    f.fit = fit_role(get("role"), table.where(r));
    out.push_back(std::move(f));
  }
  return out;
}

const std::vector<PublishedFigure>& published_figures() {
  static const std::vector<PublishedFigure> figures = [] {
    try {
      return parse_published_figures(std::string(kPublishedFiguresCsv), "published_figures.csv");
    } catch (const Error& e) {
      throw std::logic_error(std::string("embedded published_figures.csv: ") + e.what());
    }
  }();
  return figures;
}

}  // namespace burst::sim
