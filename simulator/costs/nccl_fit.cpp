// Parsers for nccl-tests style tables and the least-squares fits (see nccl_fit.hpp).
#include "simulator/detail/costs/nccl_fit.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>

namespace burst::sim {
namespace {

std::vector<std::string_view> split_words(std::string_view line, char extra_separator) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  auto is_sep = [&](char c) { return std::isspace(static_cast<unsigned char>(c)) || c == extra_separator; };
  while (i < line.size()) {
    while (i < line.size() && is_sep(line[i])) ++i;
    const std::size_t start = i;
    while (i < line.size() && !is_sep(line[i])) ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

bool to_double(std::string_view word, double& out) {
  const auto result = std::from_chars(word.data(), word.data() + word.size(), out);
  return result.ec == std::errc() && result.ptr == word.data() + word.size();
}

bool all_digits(std::string_view word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; });
}

template <class Visit>
void for_each_line(std::string_view text, Visit visit) {
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    visit(text.substr(pos, end - pos));
    pos = end + 1;
  }
}

// "65K" -> 65 * 1024 rounded to the nearest power of two.
bool loose_size(std::string_view word, double& out) {
  double scale = 1;
  if (!word.empty() && (word.back() == 'K' || word.back() == 'M' || word.back() == 'G')) {
    scale = word.back() == 'K' ? 0x1p10 : word.back() == 'M' ? 0x1p20 : 0x1p30;
    word.remove_suffix(1);
  }
  double value = 0;
  if (!to_double(word, value) || value <= 0) return false;
  out = std::exp2(std::round(std::log2(value * scale)));
  return true;
}

double ring_factor(int ranks) { return 2.0 * (ranks - 1) / ranks; }

}  // namespace

std::vector<NcclTable> parse_nccl_tests(std::string_view text) {
  std::vector<NcclTable> tables;
  NcclTable current;
  for_each_line(text, [&](std::string_view line) {
    const auto words = split_words(line, '\0');
    NcclRow row;
    double time_us = 0, busbw = 0;
    const bool is_row = words.size() >= 9 && all_digits(words[0]) && to_double(words[0], row.bytes) &&
                        to_double(words[5], time_us) && to_double(words[7], busbw);
    if (is_row) {
      row.time_s = time_us * 1e-6;
      row.busbw_Bps = busbw * 1e9;
      current.push_back(row);
    } else if (!current.empty()) {
      tables.push_back(std::move(current));
      current.clear();
    }
  });
  if (!current.empty()) tables.push_back(std::move(current));
  return tables;
}

NcclTable parse_busbw_markdown(std::string_view text, int ranks) {
  NcclTable table;
  for_each_line(text, [&](std::string_view line) {
    const auto words = split_words(line, '|');
    NcclRow row;
    double busbw = 0;
    if (words.size() == 2 && loose_size(words[0], row.bytes) && to_double(words[1], busbw) && busbw > 0) {
      row.busbw_Bps = busbw * 1e9;
      row.time_s = row.bytes / (row.busbw_Bps / ring_factor(ranks));
      table.push_back(row);
    }
  });
  return table;
}

LatencyBandwidth fit_latency_bandwidth(std::span<const double> bytes, std::span<const double> seconds) {
  const auto n = static_cast<double>(bytes.size());
  double sx = 0, sy = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    sx += bytes[i];
    sy += seconds[i];
  }
  const double mx = sx / n, my = sy / n;
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    sxx += (bytes[i] - mx) * (bytes[i] - mx);
    sxy += (bytes[i] - mx) * (seconds[i] - my);
  }
  if (bytes.size() < 2 || sxx <= 0 || sxy <= 0) {
    throw std::invalid_argument("fit_latency_bandwidth: needs two distinct sizes and a rising time");
  }
  const double slope = sxy / sxx;
  return {my - slope * mx, 1.0 / slope};
}

LatencyBandwidth fit_ring_allreduce(const NcclTable& table, int ranks, double min_bytes) {
  std::vector<double> bus_bytes, seconds;
  for (const auto& row : table) {
    if (row.bytes < min_bytes) continue;
    bus_bytes.push_back(row.bytes * ring_factor(ranks));
    seconds.push_back(row.time_s);
  }
  LatencyBandwidth fit = fit_latency_bandwidth(bus_bytes, seconds);
  fit.latency_s /= 2.0 * (ranks - 1);
  return fit;
}

LatencyBandwidth fit_point_to_point(const NcclTable& table, double min_bytes) {
  std::vector<double> bytes, seconds;
  for (const auto& row : table) {
    if (row.bytes < min_bytes) continue;
    bytes.push_back(row.bytes);
    seconds.push_back(row.time_s);
  }
  return fit_latency_bandwidth(bytes, seconds);
}

double small_message_step_latency(const NcclTable& table, int ranks, double max_bytes) {
  std::vector<double> times;
  for (const auto& row : table) {
    if (row.bytes <= max_bytes) times.push_back(row.time_s);
  }
  if (times.empty()) throw std::invalid_argument("small_message_step_latency: no row small enough");
  std::sort(times.begin(), times.end());
  const std::size_t mid = times.size() / 2;
  const double median = times.size() % 2 ? times[mid] : 0.5 * (times[mid - 1] + times[mid]);
  return median / (2.0 * (ranks - 1));
}

}  // namespace burst::sim
