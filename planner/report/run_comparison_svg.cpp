// Measured beside predicted (see run_comparison_svg.hpp).
#include "planner/detail/report/run_comparison_svg.hpp"

#include "planner/detail/report/svg_charts.hpp"

namespace burst::planner::svg {

std::string comparison_bars(const Comparison& chart, bool standalone) {
  StackedBars bars;
  bars.title = chart.title;
  bars.legend = {"measured", "predicted"};
  bars.axis_label = chart.axis_label;
  for (const Compared& row : chart.rows) {
    bars.bars.push_back({row.name + " (measured)",
                         {row.has_measured ? row.measured / chart.unit : 0.0, 0.0},
                         row.has_measured ? chart.format(row.measured) : "not measured"});
    bars.bars.push_back({row.name + " (predicted)",
                         {0.0, row.has_predicted ? row.predicted / chart.unit : 0.0},
                         row.has_predicted ? chart.format(row.predicted) : "not predicted"});
  }
  return stacked_bars(bars, standalone);
}

}  // namespace burst::planner::svg
