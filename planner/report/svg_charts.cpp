// The report's two chart kinds (see svg_charts.hpp), drawn on svg::Canvas.
//
// Stacked bars: one row per bar, labels on the left, segments left to right in legend order,
// the total printed after the bar, the value axis below with nice ticks and its label, then
// the legend. Lines: categories evenly spaced on x, values on a nice y axis with grid lines,
// consecutive points joined (a missing value breaks the line), each point labelled (a missing
// one on the axis, e.g. "does not fit").
// Labels are measured (text_metrics.hpp): the bars' label column and total column are as wide as
// their widest text within limits, and a text wider than its room ends in an ellipsis; nothing
// is drawn past the picture's edges.
#include "planner/detail/report/svg_charts.hpp"

#include <algorithm>

#include "planner/detail/report/report_text.hpp"
#include "planner/detail/report/svg_canvas.hpp"
#include "planner/detail/report/text_metrics.hpp"

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
  constexpr double kTop = 24, kBar = 22, kGap = 12, kPad = 8, kFont = 12;
  double widest_label = 0, widest_total = 0;
  for (const auto& bar : chart.bars) {
    widest_label = std::max(widest_label, text_width(bar.label, kFont));
    widest_total = std::max(widest_total, text_width(bar.total, kFont));
  }
  // The label column: its widest label, between 120 and 330 px; the total column likewise.
  const double left = std::clamp(widest_label + 2 * kPad, 120.0, 330.0);
  const double right = std::clamp(widest_total + 2 * kPad, 60.0, 160.0);
  const double plot = kWidth - left - right;
  double largest = chart.marker ? report_text::plottable(*chart.marker) : 0;
  for (const auto& bar : chart.bars) largest = std::max(largest, bar_sum(bar));
  const NiceAxis axis(largest);
  const double px = plot / axis.max;
  const double axis_y = kTop + static_cast<double>(chart.bars.size()) * (kBar + kGap);

  // The legend's height is known only once it is laid out: lay it out on a scratch canvas.
  const double legend_height = Canvas(kWidth, 0, "", false).legend(left, 0, plot + right, chart.legend);
  Canvas c(kWidth, axis_y + 50 + legend_height + 8, chart.title, standalone);

  for (double tick : axis.ticks()) {
    const double x = left + tick * px;
    c.line(x, kTop - 6, x, axis_y, kGrid, 1);
    c.text(x, axis_y + 16, NiceAxis::label(tick), "middle");
  }
  for (std::size_t b = 0; b < chart.bars.size(); ++b) {
    const Bar& bar = chart.bars[b];
    const double y = kTop + static_cast<double>(b) * (kBar + kGap);
    c.text(left - kPad, y + kBar / 2 + 4, fit_text(bar.label, kFont, left - 2 * kPad), "end");
    double x = left;
    for (std::size_t i = 0; i < bar.values.size() && i < chart.legend.size(); ++i) {
      const double w = report_text::plottable(bar.values[i]) * px;
      if (w > 0) c.rect(x, y, w, kBar, palette(i));
      x += w;
    }
    c.text(x + 6, y + kBar / 2 + 4, fit_text(bar.total, kFont, kWidth - x - 6 - kPad));
  }
  c.line(left, axis_y, left + plot, axis_y, kInk, 1);
  c.text(left + plot / 2, axis_y + 34, fit_text(chart.axis_label, kFont, plot), "middle");
  if (chart.marker) {
    const double x = left + report_text::plottable(*chart.marker) * px;
    c.line(x, kTop - 6, x, axis_y, kInk, 1.5, true);
    const std::string label = fit_text(chart.marker_label, kFont, kWidth - 2 * kPad);
    const double half = text_width(label, kFont) / 2;  // centred on the marker, kept inside the picture
    c.text(std::clamp(x, kPad + half, kWidth - kPad - half), kTop - 10, label, "middle");
  }
  c.legend(left, axis_y + 50, plot + right, chart.legend);
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
  c.text(kLeft + plot / 2, axis_y + 40, fit_text(chart.x_label, 12, plot), "middle");
  c.text(24, kTop + kPlot / 2, fit_text(chart.y_label, 12, kPlot), "middle", 12, -90);

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
    const double room = slot - 4;  // a label keeps to its category's slot
    c.text(x, axis_y + 18, fit_text(chart.categories[i], 12, room), "middle");
    if (!has_point(i)) {
      if (i < chart.value_labels.size()) c.text(x, axis_y - 8, fit_text(chart.value_labels[i], 12, room), "middle");
      continue;
    }
    const auto [px, py] = point(i);
    c.circle(px, py, 4, palette(0));
    if (i < chart.value_labels.size()) c.text(px, py - 10, fit_text(chart.value_labels[i], 12, room), "middle");
  }
  return c.finish();
}

}  // namespace burst::planner::svg
