// Internal to burst_report: numbers and text as the report prints them, for people.
//
// Quantities read the same everywhere in a report: times and memory as units::human_duration
// and units::human_bytes print them, MFU as a percentage, throughput grouped by thousands. A
// value that is not finite prints "n/a" so a broken prediction can never put "nan" or "inf"
// in front of a reader. Escaping is per output format, by common/escape.hpp: escape::html for
// HTML and SVG (every text node and attribute), escape::markdown for table cells and paragraphs.
#pragma once

#include <string>
#include <string_view>

namespace burst::planner::report_text {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

[[nodiscard]] std::string percent(double fraction);  // "41.0%"
[[nodiscard]] std::string grouped(double value);     // "26,214" (rounded to an integer)
[[nodiscard]] std::string ratio(double value);       // "1.17x"
// A finite, non-negative value, or 0: what charts plot.
[[nodiscard]] double plottable(double value);

[[nodiscard]] std::string base64(std::string_view bytes);  // RFC 4648, padded

}  // namespace burst::planner::report_text
