// Option validators with messages a person can act on (CLI11's own say "Value 0 not in range
// 0.000000 to 1.79769e+308" for a count that must be at least 1).
#pragma once

#include <charconv>
#include <cmath>
#include <string>

#include <CLI/CLI.hpp>

namespace burst::cli {

// A whole number of at least 1 that fits an int: node, rank and batch counts, sizes.
inline const CLI::Validator kAtLeastOne(
    [](std::string& text) -> std::string {
      int value = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc{} || end != text.data() + text.size() || value < 1) {
        return "must be a whole number of 1 or more, got '" + text + "'";
      }
      return {};
    },
    "INT>=1");

// A finite number above 0 (CLI::PositiveNumber lets "nan" through: nan <= 0 is false): rates,
// seconds.
inline const CLI::Validator kFinitePositive(
    [](std::string& text) -> std::string {
      double value = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value) || value <= 0) {
        return "must be a finite number above 0, got '" + text + "'";
      }
      return {};
    },
    "NUMBER>0");

}  // namespace burst::cli
