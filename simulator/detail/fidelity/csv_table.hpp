// A CSV table whose columns are found by name (RFC 4180: commas separate, double quotes enclose
// fields that hold commas or line breaks, a doubled quote inside them is one quote). The
// published tables the fidelity checks read (published_figures.csv, published_layouts.csv) name
// their columns in the first line, so a file can gain columns without breaking its reader.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace burst::sim {

class CsvTable {
 public:
  // Throws burst::Error naming `origin` and the line: an unclosed quote, an empty table, a
  // missing required column, a row with another field count than the header.
  CsvTable(std::string_view text, std::string origin, const std::vector<std::string>& required_columns);

  [[nodiscard]] std::size_t rows() const { return records_.size() - 1; }
  // Row r's field of column `name` (a column of the header; std::out_of_range otherwise).
  [[nodiscard]] const std::string& text(std::size_t r, const std::string& name) const;
  // The same as a number; an empty field is 0. Throws burst::Error for text that is not one.
  [[nodiscard]] double number(std::size_t r, const std::string& name) const;
  // The same, which must be one of `allowed`; else burst::Error at "<origin> row N: <name>" with
  // `valid` saying what is.
  [[nodiscard]] const std::string& one_of(std::size_t r, const std::string& name,
                                          std::initializer_list<std::string_view> allowed,
                                          const std::string& valid) const;
  // "<origin> row N", for errors about row r.
  [[nodiscard]] std::string where(std::size_t r) const;

 private:
  std::string origin_;
  std::vector<std::vector<std::string>> records_;  // the header first
  std::map<std::string, std::size_t, std::less<>> column_;
};

}  // namespace burst::sim
