// Internal to the report's charts: a minimal SVG writer and the axis arithmetic.
//
// Canvas appends elements with coordinates rounded to 0.1 px and every text XML-escaped;
// finish() closes the document. Pictures (the cluster, the timeline) also use outlined boxes,
// paths with arrowheads, and groups whose class names what they draw ("gpu", "ring-intra"),
// which the tests count and a stylesheet could address. NiceAxis picks ticks a reader can add up: steps of 1, 2 or
// 5 times a power of ten, about five of them, the last at or above the largest value.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace burst::planner::svg {

// The fixed palette, cycled in legend order.
[[nodiscard]] const char* palette(std::size_t index);

struct NiceAxis {
  double max = 1;   // the axis ends here (> 0)
  double step = 1;  // between ticks
  explicit NiceAxis(double largest);
  [[nodiscard]] std::vector<double> ticks() const;
  [[nodiscard]] static std::string label(double tick);  // "0", "2.5", "40"
};

class Canvas {
 public:
  Canvas(double width, double height, std::string_view title, bool standalone);
  void rect(double x, double y, double w, double h, std::string_view fill);
  void line(double x1, double y1, double x2, double y2, std::string_view stroke, double width, bool dashed = false);
  void polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke);
  void circle(double cx, double cy, double r, std::string_view fill);
  // anchor: "start", "middle" or "end"; a non-zero angle rotates the text about (x, y).
  void text(double x, double y, std::string_view content, std::string_view anchor = "start", int size = 12,
            double angle = 0);
  // A box with an outline (stroke "none": no outline) and rounded corners.
  void box(double x, double y, double w, double h, std::string_view fill, std::string_view stroke, double radius = 3);
  // An arrowhead marker coloured `colour`, referred to as url(#id) by path(); ids must be
  // unique in the whole HTML page, so callers prefix them with their picture's name.
  void arrow_marker(std::string_view id, std::string_view colour);
  // An SVG path ("M x y L ..."), unfilled; `marker` (an arrow_marker id, or "") ends it.
  void path(std::string_view d, std::string_view stroke, double width, std::string_view css_class,
            std::string_view marker = "", bool dashed = false);
  // <g class="..."> ... </g>: what is drawn between belongs to one thing (a GPU, a ring).
  void begin_group(std::string_view css_class);
  void end_group();
  // Swatches and names in rows that wrap at `width`; returns the height used.
  double legend(double x, double y, double width, const std::vector<std::string>& names);
  // The same with the colours given, one per name.
  double legend(double x, double y, double width, const std::vector<std::string>& names,
                const std::vector<std::string>& colours);
  [[nodiscard]] std::string finish();

 private:
  std::string out_;
};

}  // namespace burst::planner::svg
