// The embedded table of published figures, parsed once. The CSV's columns are named in its
// first line; rows are found by column name, so the file can gain columns.
#include "simulator/fidelity/published_figures.hpp"

#include <charconv>
#include <map>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "common/error.hpp"

namespace burst::sim {

extern const std::string_view kPublishedFiguresCsv;

namespace {

// Splits CSV text into records of fields: commas separate, double quotes enclose fields that
// hold commas, and a doubled quote inside them is one quote.
std::vector<std::vector<std::string>> csv_records(std::string_view text, const std::string& origin) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;
  int line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        if (ch == '\n') ++line;
        field += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      record.push_back(std::move(field));
      field.clear();
    } else if (ch == '\n') {
      record.push_back(std::move(field));
      field.clear();
      records.push_back(std::move(record));
      record.clear();
      ++line;
    } else if (ch != '\r') {
      field += ch;
    }
  }
  if (quoted) throw Error(Problem{origin, fmt::format("line {}: a quoted field never ends", line), "", ""});
  if (!field.empty() || !record.empty()) {
    record.push_back(std::move(field));
    records.push_back(std::move(record));
  }
  return records;
}

double number_or_zero(const std::string& text, const std::string& where) {
  if (text.empty()) return 0;
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size()) {
    throw Error(Problem{where, fmt::format("'{}' is not a number", text), "", ""});
  }
  return v;
}

}  // namespace

std::vector<PublishedFigure> parse_published_figures(const std::string& csv, const std::string& origin) {
  const auto records = csv_records(csv, origin);
  if (records.empty()) throw Error(Problem{origin, "empty table", "", ""});
  std::map<std::string, std::size_t> column;
  for (std::size_t c = 0; c < records.front().size(); ++c) column[records.front()[c]] = c;
  for (const char* required : {"id", "kind", "gpu", "gpus", "heads", "kv_heads", "head_dim", "seq_len", "batch", "mask",
                               "layout", "method", "phase", "metric", "value", "source", "role"}) {
    if (!column.contains(required)) throw Error(Problem{origin, fmt::format("no column '{}'", required), "", ""});
  }
  std::vector<PublishedFigure> out;
  for (std::size_t r = 1; r < records.size(); ++r) {
    const auto& rec = records[r];
    const std::string where = fmt::format("{} row {}", origin, r + 1);
    if (rec.size() != records.front().size()) {
      throw Error(
          Problem{where, fmt::format("{} fields, the header has {}", rec.size(), records.front().size()), "", ""});
    }
    const auto get = [&](const char* name) -> const std::string& { return rec[column.at(name)]; };
    const auto num = [&](const char* name) { return number_or_zero(get(name), where + " " + name); };
    PublishedFigure f;
    f.id = get("id");
    f.kind = get("kind");
    f.gpu = get("gpu");
    f.gpus = static_cast<int>(num("gpus"));
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
    f.source = get("source");
    if (get("role") != "fit" && get("role") != "held_out") {
      throw Error(Problem{where + " role", fmt::format("'{}' is neither fit nor held_out", get("role")), "", ""});
    }
    f.fit = get("role") == "fit";
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
