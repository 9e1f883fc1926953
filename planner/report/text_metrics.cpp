// text_width and fit_text (see text_metrics.hpp).
#include "planner/detail/report/text_metrics.hpp"

#include <array>
#include <cstdint>

namespace burst::planner::svg {
namespace {

constexpr double kUnitsPerEm = 2048;

// DejaVu Sans 2.37 (fonts-dejavu-core), advance widths of code points 32 .. 126.
constexpr std::array<std::uint16_t, 95> kAsciiAdvance{
    651,  821,  942,  1716, 1303, 1946, 1597, 563,  799,  799,  1024, 1716, 651,  739,  651,  690,  1303, 1303, 1303,
    1303, 1303, 1303, 1303, 1303, 1303, 1303, 690,  690,  1716, 1716, 1716, 1087, 2048, 1401, 1405, 1430, 1577, 1294,
    1178, 1587, 1540, 604,  604,  1343, 1141, 1767, 1532, 1612, 1235, 1612, 1423, 1300, 1251, 1499, 1401, 2025, 1403,
    1251, 1403, 799,  690,  799,  1716, 1024, 1024, 1255, 1300, 1126, 1300, 1260, 721,  1300, 1298, 569,  569,  1186,
    569,  1995, 1298, 1253, 1300, 1300, 842,  1067, 803,  1298, 1212, 1675, 1212, 1212, 1075, 1303, 690,  1303, 1716};
constexpr double kOtherAdvance = 2048;  // a full em: no glyph of the font is wider
constexpr std::string_view kEllipsis = "\u2026";

// The byte length of the UTF-8 character that starts with `lead` (1 for a stray byte).
std::size_t char_bytes(unsigned char lead) {
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

double advance(std::string_view text, std::size_t at) {
  const auto c = static_cast<unsigned char>(text[at]);
  if (c >= 32 && c <= 126) return kAsciiAdvance[c - 32];
  return c < 32 ? 0 : kOtherAdvance;
}

}  // namespace

double text_width(std::string_view text, double size) {
  double units = 0;
  for (std::size_t at = 0; at < text.size(); at += char_bytes(static_cast<unsigned char>(text[at]))) {
    units += advance(text, at);
  }
  return units / kUnitsPerEm * size;
}

std::string fit_text(std::string_view text, double size, double width) {
  if (text_width(text, size) <= width) return std::string(text);
  const double room = width - text_width(kEllipsis, size);
  if (room < 0) return "";
  double used = 0;
  std::size_t end = 0;
  while (end < text.size()) {
    const std::size_t next = end + char_bytes(static_cast<unsigned char>(text[end]));
    const double w = advance(text, end) / kUnitsPerEm * size;
    if (used + w > room || next > text.size()) break;
    used += w;
    end = next;
  }
  return std::string(text.substr(0, end)) + std::string(kEllipsis);
}

}  // namespace burst::planner::svg
