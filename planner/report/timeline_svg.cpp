// The predicted timeline picture (see timeline_svg.hpp), drawn on svg::Canvas.
#include "planner/detail/report/timeline_svg.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "planner/detail/report/svg_canvas.hpp"
#include "planner/detail/report/text_metrics.hpp"

namespace burst::planner::svg {
namespace {

constexpr double kWidth = 900, kLeft = 90, kRight = 20, kTop = 30;
constexpr double kCompute = 18, kSend = 10, kRankGap = 14;
constexpr const char* kComputeColour = "#0072B2";
constexpr const char* kSendColour = "#E69F00";
constexpr const char* kExposedColour = "#F2B8A0";
constexpr const char* kInk = "#222222";
constexpr const char* kGrid = "#DDDDDD";

// The stretches of [begin, end) that no interval covers.
std::vector<std::pair<double, double>> gaps(std::vector<std::pair<double, double>> busy, double begin, double end) {
  std::sort(busy.begin(), busy.end());
  std::vector<std::pair<double, double>> out;
  double at = begin;
  for (const auto& [s, e] : busy) {
    if (e <= at || s >= end) continue;
    if (s > at) out.emplace_back(at, s);
    at = std::max(at, e);
  }
  if (at < end) out.emplace_back(at, end);
  return out;
}

}  // namespace

std::string timeline_picture(const Timeline& t, bool standalone) {
  const double total = std::max(t.forward_s + t.backward_s, 1e-12);
  const bool ms = total >= 1e-3;
  const double unit = ms ? 1e3 : 1e6;
  const NiceAxis axis(total * unit);
  const double plot = kWidth - kLeft - kRight;
  const double px = plot / axis.max;  // pixels per axis unit
  const auto x_of = [&](double seconds) { return kLeft + seconds * unit * px; };
  const double row = kCompute + 3 + kSend + kRankGap;
  const double axis_y = kTop + static_cast<double>(t.ranks.size()) * row;
  const std::vector<std::string> names{"compute", "send", "exposed (waiting on data)"};
  const std::vector<std::string> colours{kComputeColour, kSendColour, kExposedColour};
  Canvas c(kWidth, axis_y + 70, "Predicted timeline of one attention layer", standalone);

  for (double tick : axis.ticks()) {
    const double x = kLeft + tick * px;
    c.line(x, kTop - 8, x, axis_y, kGrid, 1);
    c.text(x, axis_y + 16, NiceAxis::label(tick), "middle");
  }
  c.line(kLeft, axis_y, kLeft + plot, axis_y, kInk, 1);
  c.text(kLeft + plot / 2, axis_y + 32, ms ? "milliseconds" : "microseconds", "middle");
  const double split = x_of(t.forward_s);
  c.line(split, kTop - 14, split, axis_y, kInk, 1.5, true);
  // The two phase names beside the split, kept inside the picture when a phase is short.
  c.text(std::max(split - 6, text_width("forward", 12) + 4), kTop - 16, "forward", "end");
  c.text(std::min(split + 6, kWidth - text_width("backward", 12) - 4), kTop - 16, "backward", "start");

  for (std::size_t r = 0; r < t.ranks.size(); ++r) {
    const int rank = t.ranks[r];
    const double y = kTop + static_cast<double>(r) * row;
    c.begin_group("timeline-rank");
    c.text(kLeft - 8, y + 13, fmt::format("rank {}", rank), "end");
    c.text(kLeft - 8, y + kCompute + 3 + 9, "sends", "end", 9);
    std::vector<std::pair<double, double>> busy;
    for (const auto& b : t.bars) {
      if (b.rank == rank && !b.send) busy.emplace_back(b.start_s, b.end_s);
    }
    c.begin_group("exposed");
    for (const auto& [begin, end] : {std::pair{0.0, t.forward_s}, std::pair{t.forward_s, t.forward_s + t.backward_s}}) {
      for (const auto& [s, e] : gaps(busy, begin, end))
        c.rect(x_of(s), y, (e - s) * unit * px, kCompute, kExposedColour);
    }
    c.end_group();
    c.begin_group("compute");
    for (const auto& [s, e] : busy) c.box(x_of(s), y, (e - s) * unit * px, kCompute, kComputeColour, "none", 0);
    c.end_group();
    c.begin_group("send");
    for (const auto& b : t.bars) {
      if (b.rank == rank && b.send) {
        c.box(x_of(b.start_s), y + kCompute + 3, (b.end_s - b.start_s) * unit * px, kSend, kSendColour, "none", 0);
      }
    }
    c.end_group();
    c.end_group();
  }
  c.legend(kLeft, axis_y + 44, plot, names, colours);
  return c.finish();
}

}  // namespace burst::planner::svg
