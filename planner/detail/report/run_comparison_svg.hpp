// Internal to burst_report: measured beside predicted, as pairs of bars.
//
// One row per figure (a step time part, a memory item, a link level's bytes): the measured
// bar (blue) above the predicted one (orange), each labelled with its value, or with "not
// measured" / "not predicted" where the run or the plan has no such figure. Built on the
// report's stacked-bar chart (svg_charts.hpp) with one segment per bar.
#pragma once

#include <string>
#include <vector>

#include "planner/report/run_comparison.hpp"

namespace burst::planner::svg {

struct Comparison {
  std::string title;
  std::vector<Compared> rows;
  double unit = 1;  // axis units per value unit (e.g. 1 GiB)
  std::string axis_label;
  std::string (*format)(double) = nullptr;  // a value as people read it ("1.2 GiB")
};

[[nodiscard]] std::string comparison_bars(const Comparison& chart, bool standalone);

}  // namespace burst::planner::svg
