// Numbers for people and base64 (see report_text.hpp).
#include "planner/detail/report/report_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

namespace burst::planner::report_text {

double plottable(double value) { return std::isfinite(value) && value > 0 ? value : 0.0; }

std::string percent(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:.1f}%", fraction * 100) : "n/a";
}

std::string ratio(double value) { return std::isfinite(value) ? fmt::format("{:.2f}x", value) : "n/a"; }

std::string grouped(double value) {
  if (!std::isfinite(value)) return "n/a";
  const std::string digits = fmt::format("{:.0f}", std::fabs(value));
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value <= -0.5 ? "-" + out : out;
}

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t chunk = 0;
    for (std::size_t k = 0; k < 3; ++k) {
      chunk = (chunk << 8) | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    }
    for (std::size_t k = 0; k < 4; ++k) {
      out += k <= n ? kAlphabet[(chunk >> (18 - 6 * k)) & 0x3f] : '=';
    }
  }
  return out;
}

}  // namespace burst::planner::report_text
