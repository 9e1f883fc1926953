#include "common/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"

namespace burst::units {
namespace {

struct Suffix {
  std::string_view text;
  double factor;
};

constexpr double kK = 1e3, kM = 1e6, kG = 1e9, kT = 1e12, kP = 1e15;
constexpr double kKi = 1024.0, kMi = kKi * 1024.0, kGi = kMi * 1024.0, kTi = kGi * 1024.0;

// Longest suffixes first where one is a tail of another ("GBps" before "Bps").
const std::vector<Suffix>& bandwidth_suffixes() {
  static const std::vector<Suffix> s = {
      {"TBps", kT},     {"GBps", kG},     {"MBps", kM},     {"KBps", kK},     {"kBps", kK},     {"TB/s", kT},
      {"GB/s", kG},     {"MB/s", kM},     {"KB/s", kK},     {"kB/s", kK},     {"TiBps", kTi},   {"GiBps", kGi},
      {"MiBps", kMi},   {"KiBps", kKi},   {"TiB/s", kTi},   {"GiB/s", kGi},   {"MiB/s", kMi},   {"KiB/s", kKi},
      {"Tbps", kT / 8}, {"Gbps", kG / 8}, {"Mbps", kM / 8}, {"Kbps", kK / 8}, {"kbps", kK / 8}, {"Tb/s", kT / 8},
      {"Gb/s", kG / 8}, {"Mb/s", kM / 8}, {"Kb/s", kK / 8}, {"kb/s", kK / 8}, {"Bps", 1.0},     {"B/s", 1.0},
      {"bps", 1.0 / 8}, {"b/s", 1.0 / 8}};
  return s;
}
const std::vector<Suffix>& duration_suffixes() {
  static const std::vector<Suffix> s = {{"ns", 1e-9}, {"us", 1e-6},  {"ms", 1e-3},
                                        {"s", 1.0},   {"min", 60.0}, {"h", 3600.0}};
  return s;
}
const std::vector<Suffix>& byte_suffixes() {
  static const std::vector<Suffix> s = {{"TiB", kTi}, {"GiB", kGi}, {"MiB", kMi}, {"KiB", kKi}, {"TB", kT},
                                        {"GB", kG},   {"MB", kM},   {"KB", kK},   {"kB", kK},   {"B", 1.0}};
  return s;
}
const std::vector<Suffix>& flop_suffixes() {
  static const std::vector<Suffix> s = {{"PFLOPS", kP},  {"TFLOPS", kT},  {"GFLOPS", kG},  {"MFLOPS", kM},
                                        {"FLOPS", 1.0},  {"PFLOP/s", kP}, {"TFLOP/s", kT}, {"GFLOP/s", kG},
                                        {"MFLOP/s", kM}, {"FLOP/s", 1.0}};
  return s;
}
const std::vector<Suffix>& token_suffixes() {
  static const std::vector<Suffix> s = {{"G", kGi}, {"M", kMi}, {"K", kKi}, {"k", kKi}, {"", 1.0}};
  return s;
}

std::string valid_list(const std::vector<Suffix>& suffixes) {
  std::string out;
  for (const auto& s : suffixes) {
    if (s.text.empty()) continue;
    if (!out.empty()) out += ", ";
    out += s.text;
  }
  return out;
}

std::string_view trim(std::string_view t) {
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  return t;
}

[[noreturn]] void fail(std::string_view field, std::string_view text, std::string what,
                       const std::vector<Suffix>& suffixes, std::string_view example) {
  throw Error(Problem{std::string(field), fmt::format("'{}': {}", text, what),
                      "a number followed by one of " + valid_list(suffixes),
                      fmt::format("write it like \"{}\"", example)});
}

double parse_with(std::string_view raw, std::string_view field, const std::vector<Suffix>& suffixes,
                  std::string_view example, bool unit_required) {
  const std::string_view text = trim(raw);
  double value = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  // from_chars reads "1e400" whole and says result_out_of_range: a number, just not a double.
  if (ec == std::errc::result_out_of_range) {
    fail(field, raw, "the number is out of range (beyond what a double holds)", suffixes, example);
  }
  if (ec != std::errc{} || end == text.data()) fail(field, raw, "does not start with a number", suffixes, example);
  if (!std::isfinite(value)) fail(field, raw, "is not a finite number", suffixes, example);
  if (value < 0) fail(field, raw, "is negative", suffixes, example);
  const std::string_view unit = trim(text.substr(static_cast<std::size_t>(end - text.data())));
  if (unit.empty() && unit_required) fail(field, raw, "has no unit", suffixes, example);
  for (const auto& s : suffixes) {
    if (unit != s.text) continue;
    if (!std::isfinite(value * s.factor)) fail(field, raw, "is too large", suffixes, example);
    return value * s.factor;
  }
  fail(field, raw, fmt::format("unknown unit '{}'", unit), suffixes, example);
}

// Picks the largest suffix whose factor is <= value, prints with 6 significant digits.
std::string format_with(double value, const std::vector<Suffix>& ordered_large_to_small) {
  if (value == 0.0) return fmt::format("0{}", ordered_large_to_small.back().text);
  for (const auto& s : ordered_large_to_small) {
    if (std::abs(value) >= s.factor * (1 - 1e-12)) return fmt::format("{:.6g}{}", value / s.factor, s.text);
  }
  const auto& smallest = ordered_large_to_small.back();
  return fmt::format("{:.6g}{}", value / smallest.factor, smallest.text);
}

bool is_binary_multiple(double value, double unit) {
  const double q = value / unit;
  return q >= 1.0 && std::abs(q - std::round(q)) < 1e-9 * q;
}

}  // namespace

double parse_bandwidth(std::string_view text, std::string_view field) {
  return parse_with(text, field, bandwidth_suffixes(), "200GBps", true);
}
double parse_duration(std::string_view text, std::string_view field) {
  return parse_with(text, field, duration_suffixes(), "2us", true);
}
double parse_bytes(std::string_view text, std::string_view field) {
  return parse_with(text, field, byte_suffixes(), "80GiB", true);
}
double parse_flop_rate(std::string_view text, std::string_view field) {
  return parse_with(text, field, flop_suffixes(), "312TFLOPS", true);
}
std::int64_t parse_tokens(std::string_view text, std::string_view field) {
  const double v = parse_with(text, field, token_suffixes(), "1M", false);
  if (v != std::floor(v) || v > 9.0e15) {
    throw Error(Problem{std::string(field), fmt::format("'{}' is not a whole number of tokens", text),
                        "a whole number, optionally with K, M or G (powers of 1024)", "write it like \"1M\""});
  }
  return static_cast<std::int64_t>(v);
}

std::string format_bandwidth(double bps) {
  static const std::vector<Suffix> s = {{"TBps", kT}, {"GBps", kG}, {"MBps", kM}, {"KBps", kK}, {"Bps", 1.0}};
  return format_with(bps, s);
}
std::string format_duration(double seconds) {
  static const std::vector<Suffix> s = {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
  return format_with(seconds, s);
}
std::string format_bytes(double bytes) {
  static const std::vector<Suffix> binary = {{"TiB", kTi}, {"GiB", kGi}, {"MiB", kMi}, {"KiB", kKi}};
  for (const auto& s : binary) {
    if (is_binary_multiple(bytes, s.factor)) return fmt::format("{:.6g}{}", bytes / s.factor, s.text);
  }
  static const std::vector<Suffix> decimal = {{"TB", kT}, {"GB", kG}, {"MB", kM}, {"KB", kK}, {"B", 1.0}};
  return format_with(bytes, decimal);
}
std::string format_flop_rate(double flops) {
  static const std::vector<Suffix> s = {{"PFLOPS", kP}, {"TFLOPS", kT}, {"GFLOPS", kG}, {"MFLOPS", kM}, {"FLOPS", 1.0}};
  return format_with(flops, s);
}
std::string format_tokens(std::int64_t tokens) {
  static const std::array<std::pair<std::int64_t, char>, 3> s = {
      {{std::int64_t{1} << 30, 'G'}, {std::int64_t{1} << 20, 'M'}, {std::int64_t{1} << 10, 'K'}}};
  for (const auto& [factor, letter] : s) {
    if (tokens >= factor && tokens % factor == 0) return fmt::format("{}{}", tokens / factor, letter);
  }
  return fmt::format("{}", tokens);
}

std::string human_duration(double seconds) {
  if (!std::isfinite(seconds)) return "n/a";
  if (seconds == 0) return "0 s";
  if (std::fabs(seconds) < 1) return fmt::format("{:.1f} ms", seconds * 1e3);
  return fmt::format("{:.2f} s", seconds);
}

std::string human_bytes(double bytes) {
  if (!std::isfinite(bytes)) return "n/a";
  const double size = std::fabs(bytes);
  if (size >= kGi) return fmt::format("{:.1f} GiB", bytes / kGi);
  if (size >= kMi) return fmt::format("{:.1f} MiB", bytes / kMi);
  if (size >= kKi) return fmt::format("{:.1f} KiB", bytes / kKi);
  return fmt::format("{:.0f} B", bytes);
}

}  // namespace burst::units
