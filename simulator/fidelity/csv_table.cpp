// Reading the published tables (csv_table.hpp).
#include "simulator/detail/fidelity/csv_table.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "common/error.hpp"

namespace burst::sim {
namespace {

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

}  // namespace

CsvTable::CsvTable(std::string_view text, std::string origin, const std::vector<std::string>& required_columns)
    : origin_(std::move(origin)), records_(csv_records(text, origin_)) {
  if (records_.empty()) throw Error(Problem{origin_, "empty table", "", ""});
  for (std::size_t c = 0; c < records_.front().size(); ++c) column_[records_.front()[c]] = c;
  for (const std::string& required : required_columns) {
    if (!column_.contains(required)) throw Error(Problem{origin_, fmt::format("no column '{}'", required), "", ""});
  }
  for (std::size_t r = 1; r < records_.size(); ++r) {
    if (records_[r].size() != records_.front().size()) {
      throw Error(Problem{where(r - 1),
                          fmt::format("{} fields, the header has {}", records_[r].size(), records_.front().size()), "",
                          ""});
    }
  }
}

const std::string& CsvTable::text(std::size_t r, const std::string& name) const {
  return records_.at(r + 1).at(column_.at(name));
}

double CsvTable::number(std::size_t r, const std::string& name) const {
  const std::string& field = text(r, name);
  if (field.empty()) return 0;
  double v = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (ec != std::errc{} || end != field.data() + field.size()) {
    throw Error(Problem{where(r) + " " + name, fmt::format("'{}' is not a number", field), "", ""});
  }
  return v;
}

const std::string& CsvTable::one_of(std::size_t r, const std::string& name,
                                    std::initializer_list<std::string_view> allowed, const std::string& valid) const {
  const std::string& field = text(r, name);
  if (std::find(allowed.begin(), allowed.end(), field) == allowed.end()) {
    throw Error(Problem{where(r) + ": " + name, field, valid, ""});
  }
  return field;
}

std::string CsvTable::where(std::size_t r) const { return fmt::format("{} row {}", origin_, r + 2); }

}  // namespace burst::sim
