// A minimal SVG writer and nice axis ticks (see svg_canvas.hpp).
#include "planner/detail/report/svg_canvas.hpp"

#include <array>
#include <cmath>

#include <fmt/format.h>

#include "common/escape.hpp"
#include "planner/detail/report/text_metrics.hpp"

namespace burst::planner::svg {

const char* palette(std::size_t index) {
  static constexpr std::array<const char*, 8> kColours{"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                                       "#56B4E9", "#D55E00", "#F0E442", "#999999"};
  return kColours[index % kColours.size()];
}

NiceAxis::NiceAxis(double largest) {
  if (!(largest > 0) || !std::isfinite(largest)) return;  // the default 0..1 axis
  const double raw = largest / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / magnitude;
  step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * magnitude;
  max = std::ceil(largest / step - 1e-9) * step;
}

std::vector<double> NiceAxis::ticks() const {
  std::vector<double> out;
  const auto count = static_cast<int>(std::lround(max / step));
  for (int i = 0; i <= count; ++i) out.push_back(i * step);
  return out;
}

std::string NiceAxis::label(double tick) { return fmt::format("{:g}", tick); }

Canvas::Canvas(double width, double height, std::string_view title, bool standalone) {
  out_ = fmt::format(R"(<svg{} width="{:.1f}" height="{:.1f}" viewBox="0 0 {:.1f} {:.1f}" role="img" )"
                     R"(font-family="{}" font-size="12"><title>{}</title>)",
                     standalone ? R"( xmlns="http://www.w3.org/2000/svg")" : "", width, height, width, height,
                     kFontFamily, escape::html(title));
  out_ += '\n';
}

void Canvas::rect(double x, double y, double w, double h, std::string_view fill) {
  out_ += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"/>)", x, y, w, h, fill);
  out_ += '\n';
}

void Canvas::line(double x1, double y1, double x2, double y2, std::string_view stroke, double width, bool dashed) {
  out_ += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="{:.1f}"{}/>)",
                      x1, y1, x2, y2, stroke, width, dashed ? R"( stroke-dasharray="6 4")" : "");
  out_ += '\n';
}

void Canvas::polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke) {
  std::string coordinates;
  for (const auto& [x, y] : points) coordinates += fmt::format("{}{:.1f},{:.1f}", coordinates.empty() ? "" : " ", x, y);
  out_ += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>)", coordinates, stroke);
  out_ += '\n';
}

void Canvas::circle(double cx, double cy, double r, std::string_view fill) {
  out_ += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="{:.1f}" fill="{}"/>)", cx, cy, r, fill);
  out_ += '\n';
}

void Canvas::text(double x, double y, std::string_view content, std::string_view anchor, int size, double angle) {
  const std::string rotate =
      angle == 0 ? std::string() : fmt::format(R"svg( transform="rotate({:.1f} {:.1f} {:.1f})")svg", angle, x, y);
  out_ += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="{}" font-size="{}"{}>{}</text>)", x, y, anchor, size,
                      rotate, escape::html(content));
  out_ += '\n';
}

void Canvas::box(double x, double y, double w, double h, std::string_view fill, std::string_view stroke,
                 double radius) {
  out_ +=
      fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" rx="{:.1f}" fill="{}" stroke="{}"/>)",
                  x, y, w, h, radius, fill, stroke);
  out_ += '\n';
}

void Canvas::arrow_marker(std::string_view id, std::string_view colour) {
  out_ += fmt::format(R"(<defs><marker id="{}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" )"
                      R"(orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="{}"/></marker></defs>)",
                      escape::html(id), colour);
  out_ += '\n';
}

void Canvas::path(std::string_view d, std::string_view stroke, double width, std::string_view css_class,
                  std::string_view marker, bool dashed) {
  out_ += fmt::format(R"(<path class="{}" d="{}" fill="none" stroke="{}" stroke-width="{:.1f}"{}{}/>)",
                      escape::html(css_class), d, stroke, width,
                      marker.empty() ? "" : fmt::format(R"svg( marker-end="url(#{})")svg", escape::html(marker)),
                      dashed ? R"( stroke-dasharray="5 3")" : "");
  out_ += '\n';
}

void Canvas::begin_group(std::string_view css_class) {
  out_ += fmt::format(R"(<g class="{}">)", escape::html(css_class));
  out_ += '\n';
}

void Canvas::end_group() { out_ += "</g>\n"; }

double Canvas::legend(double x, double y, double width, const std::vector<std::string>& names) {
  std::vector<std::string> colours;
  for (std::size_t i = 0; i < names.size(); ++i) colours.emplace_back(palette(i));
  return legend(x, y, width, names, colours);
}

double Canvas::legend(double x, double y, double width, const std::vector<std::string>& names,
                      const std::vector<std::string>& colours) {
  constexpr double kRow = 18, kSwatch = 12;
  double cx = x, cy = y;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string name = fit_text(names[i], 12, width - kSwatch - 6);
    const double item = kSwatch + 6 + text_width(name, 12) + 18;
    if (cx > x && cx + item > x + width) {
      cx = x;
      cy += kRow;
    }
    rect(cx, cy, kSwatch, kSwatch, i < colours.size() ? colours[i] : palette(i));
    text(cx + kSwatch + 6, cy + 10.5, name);
    cx += item;
  }
  return names.empty() ? 0 : cy - y + kRow;
}

std::string Canvas::finish() { return std::move(out_) + "</svg>\n"; }

}  // namespace burst::planner::svg
