// Internal to burst_report: the report's charts as hand-written SVG.
//
// Two kinds cover the report: horizontal stacked bars (one bar per strategy, one segment per
// item of a breakdown, an optional vertical marker such as the memory budget) and a line
// through categories (throughput against node count). Colours come from a fixed palette
// (Okabe-Ito, distinguishable with colour-blindness) in legend order; coordinates are
// printed with one decimal, so the same data always gives the same bytes. Text is
// XML-escaped. `standalone` adds the SVG namespace, which an image loaded from a data: URI
// needs and an SVG inlined in HTML does not.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace burst::planner::svg {

struct Bar {
  std::string label;
  std::vector<double> values;  // one per legend entry, in axis units; missing ones count 0
  std::string total;           // printed after the bar ("12.30 s"), or why it is empty
};

struct StackedBars {
  std::string title;                // read by screen readers, shown as a tooltip
  std::vector<std::string> legend;  // segment names, in colour order
  std::vector<Bar> bars;
  std::string axis_label;        // with its unit: "seconds per iteration"
  std::optional<double> marker;  // a vertical line at this value (axis units)
  std::string marker_label;
};

struct Line {
  std::string title;
  std::vector<std::string> categories;        // x tick labels, evenly spaced
  std::vector<std::optional<double>> values;  // one per category; empty: no point (a gap)
  std::vector<std::string> value_labels;      // above each point, or on the axis where none is
  std::string x_label, y_label;               // with units
};

[[nodiscard]] std::string stacked_bars(const StackedBars& chart, bool standalone);
[[nodiscard]] std::string line_chart(const Line& chart, bool standalone);

}  // namespace burst::planner::svg
