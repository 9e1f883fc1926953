// The report's two chart kinds (see svg_charts.hpp), drawn on svg::Canvas.
//
// Stacked bars: one row per bar, labels on the left, segments left to right in legend order,
// the total printed after the bar, the value axis below with nice ticks and its label, then
// the legend. Lines: categories evenly spaced on x, values on a nice y axis with grid lines,
// consecutive points joined (a missing value breaks the line), each point labelled (a missing
// one on the axis, e.g. "does not fit").
#include "planner/detail/report/svg_charts.hpp"

#include <algorithm>

#include "planner/detail/report/report_text.hpp"
#include "planner/detail/report/svg_canvas.hpp"

namespace burst::planner::svg {
namespace {

constexpr double kWidth = 760;
constexpr const char* kInk = "#222222";
constexpr const char* kGrid = "#DDDDDD";

double bar_sum(const Bar& bar) {
  double sum = 0;
  for (double v : bar.values) sum += report_text::plottable(v);
  return sum;
}

}  // namespace

std::string stacked_bars(const StackedBars& chart, bool standalone) {
  constexpr double kLeft = 200, kRight = 90, kTop = 24, kBar = 22, kGap = 12;
  const double plot = kWidth - kLeft - kRight;
  double largest = chart.marker ? report_text::plottable(*chart.marker) : 0;
  for (const auto& bar : chart.bars) largest = std::max(largest, bar_sum(bar));
  const NiceAxis axis(largest);
  const double px = plot / axis.max;
  const double axis_y = kTop + static_cast<double>(chart.bars.size()) * (kBar + kGap);

  // The legend's height is known only once it is laid out: lay it out on a scratch canvas.
  const double legend_height = Canvas(kWidth, 0, "", false).legend(kLeft, 0, plot + kRight, chart.legend);
  Canvas c(kWidth, axis_y + 50 + legend_height + 8, chart.title, standalone);

  for (double tick : axis.ticks()) {
    const double x = kLeft + tick * px;
    c.line(x, kTop - 6, x, axis_y, kGrid, 1);
    c.text(x, axis_y + 16, NiceAxis::label(tick), "middle");
  }
  for (std::size_t b = 0; b < chart.bars.size(); ++b) {
    const Bar& bar = chart.bars[b];
    const double y = kTop + static_cast<double>(b) * (kBar + kGap);
    c.text(kLeft - 8, y + kBar / 2 + 4, bar.label, "end");
    double x = kLeft;
    for (std::size_t i = 0; i < bar.values.size() && i < chart.legend.size(); ++i) {
      const double w = report_text::plottable(bar.values[i]) * px;
      if (w > 0) c.rect(x, y, w, kBar, palette(i));
      x += w;
    }
    c.text(x + 6, y + kBar / 2 + 4, bar.total);
  }
  c.line(kLeft, axis_y, kLeft + plot, axis_y, kInk, 1);
  c.text(kLeft + plot / 2, axis_y + 34, chart.axis_label, "middle");
  if (chart.marker) {
    const double x = kLeft + report_text::plottable(*chart.marker) * px;
    c.line(x, kTop - 6, x, axis_y, kInk, 1.5, true);
    c.text(x, kTop - 10, chart.marker_label, "middle");
  }
  c.legend(kLeft, axis_y + 50, plot + kRight, chart.legend);
  return c.finish();
}

std::string line_chart(const Line& chart, bool standalone) {
  constexpr double kLeft = 90, kRight = 30, kTop = 30, kPlot = 220;
  const double plot = kWidth - kLeft - kRight;
  const double axis_y = kTop + kPlot;
  double largest = 0;
  for (const auto& v : chart.values) largest = std::max(largest, v ? report_text::plottable(*v) : 0.0);
  const NiceAxis axis(largest);
  Canvas c(kWidth, axis_y + 50, chart.title, standalone);

  for (double tick : axis.ticks()) {
    const double y = axis_y - tick / axis.max * kPlot;
    c.line(kLeft, y, kLeft + plot, y, kGrid, 1);
    c.text(kLeft - 8, y + 4, NiceAxis::label(tick), "end");
  }
  c.line(kLeft, axis_y, kLeft + plot, axis_y, kInk, 1);
  c.line(kLeft, kTop, kLeft, axis_y, kInk, 1);
  c.text(kLeft + plot / 2, axis_y + 40, chart.x_label, "middle");
  c.text(24, kTop + kPlot / 2, chart.y_label, "middle", 12, -90);

  const double slot = plot / static_cast<double>(std::max<std::size_t>(1, chart.categories.size()));
  const auto has_point = [&](std::size_t i) { return i < chart.values.size() && chart.values[i].has_value(); };
  const auto point = [&](std::size_t i) {
    return std::pair{kLeft + (static_cast<double>(i) + 0.5) * slot,
                     axis_y - report_text::plottable(*chart.values[i]) / axis.max * kPlot};
  };
  std::vector<std::pair<double, double>> run;  // the current unbroken stretch of the line
  for (std::size_t i = 0; i <= chart.categories.size(); ++i) {
    if (i < chart.categories.size() && has_point(i)) {
      run.push_back(point(i));
      continue;
    }
    if (run.size() > 1) c.polyline(run, palette(0));
    run.clear();
  }
  for (std::size_t i = 0; i < chart.categories.size(); ++i) {
    const double x = kLeft + (static_cast<double>(i) + 0.5) * slot;
    c.text(x, axis_y + 18, chart.categories[i], "middle");
    if (!has_point(i)) {
      if (i < chart.value_labels.size()) c.text(x, axis_y - 8, chart.value_labels[i], "middle");
      continue;
    }
    const auto [px, py] = point(i);
    c.circle(px, py, 4, palette(0));
    if (i < chart.value_labels.size()) c.text(px, py - 10, chart.value_labels[i], "middle");
  }
  return c.finish();
}

}  // namespace burst::planner::svg
