// Labels measured to fit (planner/detail/report/text_metrics.hpp): widths from DejaVu Sans's
// advances, shortening with an ellipsis on whole UTF-8 characters, and every chart and picture
// keeping each text inside the picture (and each GPU's labels inside its box) when the labels
// are long: parsed as XML, each <text> measured at its anchor and size.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include <pugixml.hpp>

#include "planner/detail/report/cluster_svg.hpp"
#include "planner/detail/report/svg_charts.hpp"
#include "planner/detail/report/text_metrics.hpp"
#include "planner/report/report.hpp"

using namespace burst;
using planner::svg::fit_text;
using planner::svg::text_width;

namespace {

// The horizontal extent of an unrotated <text>, from its x, anchor, size and content.
struct Extent {
  double left = 0, right = 0;
};
Extent extent(const pugi::xml_node& t) {
  const double x = t.attribute("x").as_double();
  const double size = t.attribute("font-size").empty() ? 12 : t.attribute("font-size").as_double();
  const double w = text_width(t.child_value(), size);
  const std::string anchor = t.attribute("text-anchor").empty() ? "start" : t.attribute("text-anchor").value();
  if (anchor == "end") return {x - w, x};
  if (anchor == "middle") return {x - w / 2, x + w / 2};
  return {x, x + w};
}

// Every text of `svg` lies inside its width (rotated ones: inside its height); returns how many were checked.
std::size_t check_texts_inside(const std::string& svg) {
  pugi::xml_document doc;
  REQUIRE(doc.load_string(svg.c_str()));
  const pugi::xml_node root = doc.child("svg");
  const double width = root.attribute("width").as_double(), height = root.attribute("height").as_double();
  std::size_t n = 0;
  for (const pugi::xpath_node& node : doc.select_nodes("//text")) {
    const pugi::xml_node t = node.node();
    INFO("text '" << t.child_value() << "' in a picture " << width << " x " << height);
    if (std::string(t.attribute("transform").value()).find("rotate") != std::string::npos) {
      const double half = text_width(t.child_value(), t.attribute("font-size").as_double()) / 2;
      const double y = t.attribute("y").as_double();
      CHECK(y - half >= -0.5);
      CHECK(y + half <= height + 0.5);
    } else {
      const Extent e = extent(t);
      CHECK(e.left >= -0.5);
      CHECK(e.right <= width + 0.5);
    }
    ++n;
  }
  return n;
}

const std::string kLong =
    "a strategy label far longer than any column could hold: burst-usp with Ulysses 8 x ring 16, zigzag, ZeRO-3";

}  // namespace

TEST_CASE("text widths are DejaVu Sans's advances, a full em for anything beyond ASCII") {
  CHECK(text_width("Hi", 12) == Approx((1540.0 + 569.0) / 2048 * 12));
  CHECK(text_width("", 12) == 0);
  CHECK(text_width("WWW", 10) > text_width("iii", 10));
  CHECK(text_width("\u00d7", 12) == Approx(12));  // two bytes, one character
  CHECK(text_width("a\u2026b", 20) == Approx((1255.0 + 2048 + 1300) / 2048 * 20));
  CHECK(text_width("abc", 24) == Approx(2 * text_width("abc", 12)));
}

TEST_CASE("fit_text keeps what fits and shortens the rest on whole characters") {
  CHECK(fit_text("GPU 7", 12, 100) == "GPU 7");
  const std::string cut = fit_text(kLong, 12, 150);
  CHECK(cut.size() < kLong.size());
  CHECK(cut.ends_with("\u2026"));
  CHECK(text_width(cut, 12) <= 150);
  CHECK(kLong.starts_with(cut.substr(0, cut.size() - 3)));
  CHECK(text_width(fit_text(kLong, 12, 150), 12) > 150 - text_width("W", 12));  // as long as fits
  // Multi-byte characters are never split: every cut of Greek text is valid UTF-8 (2-byte letters).
  const std::string greek = "\u03b1\u03b2\u03b3\u03b4\u03b5\u03b6\u03b7\u03b8";
  for (double w = 0; w < 120; w += 3) {
    const std::string g = fit_text(greek, 12, w);
    const std::string body = g.ends_with("\u2026") ? g.substr(0, g.size() - 3) : g;
    CHECK(body.size() % 2 == 0);
    CHECK(text_width(g, 12) <= std::max(w, 0.0) + 1e-9);
  }
  CHECK(fit_text(kLong, 12, 5).empty());  // not even the ellipsis fits
}

TEST_CASE("stacked bars make room for their labels and keep every text inside the picture") {
  planner::svg::StackedBars chart;
  chart.title = "step";
  chart.legend = {"attention", "a legend entry whose name alone is wider than half of the picture, and then some"};
  chart.bars = {{"short", {1, 2}, "3.00 s"}, {kLong, {40, 2}, "42.00 s (predicted; over the budget by far)"}};
  chart.axis_label = "seconds per iteration";
  chart.marker = 41.5;
  chart.marker_label = "the budget line, labelled at a length that would run off the right edge";
  CHECK(check_texts_inside(planner::svg::stacked_bars(chart, true)) > 8);

  // A wider label column for wider labels: the first bar starts further right.
  const auto first_rect_x = [](const std::string& svg) {
    pugi::xml_document doc;
    REQUIRE(doc.load_string(svg.c_str()));
    return doc.select_node("//rect").node().attribute("x").as_double();
  };
  planner::svg::StackedBars narrow = chart;
  narrow.bars[1].label = "burst";
  CHECK(first_rect_x(planner::svg::stacked_bars(chart, true)) > first_rect_x(planner::svg::stacked_bars(narrow, true)));
}

TEST_CASE("a line chart keeps each label to its category's slot") {
  planner::svg::Line chart;
  chart.title = "scaling";
  for (int i = 0; i < 24; ++i) {
    chart.categories.push_back("nodes x " + std::to_string(i) + " (a long category name)");
    chart.values.emplace_back(i % 5 == 0 ? std::optional<double>{} : std::optional<double>{1.0 + i});
    chart.value_labels.push_back(i % 5 == 0 ? "does not fit in memory" : "123,456 tokens/s per GPU");
  }
  chart.x_label = "nodes";
  chart.y_label = "tokens/s per GPU, a y label longer than the plot is tall: it must be shortened to fit";
  const std::string svg = planner::svg::line_chart(chart, true);
  CHECK(check_texts_inside(svg) > 48);
  pugi::xml_document doc;
  REQUIRE(doc.load_string(svg.c_str()));
  const double slot = (760.0 - 90 - 30) / 24;
  for (const pugi::xpath_node& node : doc.select_nodes("//text[@text-anchor='middle' and not(@transform)]")) {
    const std::string content = node.node().child_value();
    if (content.find("nodes x") == 0 || content.find("tokens/s") == 0 || content.find("does not") == 0) {
      INFO(content);
      CHECK(text_width(content, 12) <= slot - 4 + 1e-9);
    }
  }
}

TEST_CASE("the cluster picture keeps each GPU's labels inside its box") {
  std::string path = BURST_TEST_DATA;
  path += "/plans/a800x8-burst7b-2M.json";
  const plan::Plan p = plan::read_plan(path);
  const std::string svg = planner::svg::cluster_picture(p, true);
  CHECK(check_texts_inside(svg) > 10);
  pugi::xml_document doc;
  REQUIRE(doc.load_string(svg.c_str()));
  std::size_t gpus = 0;
  for (const pugi::xpath_node& g : doc.select_nodes("//g[@class='gpu']")) {
    const double box = g.node().child("rect").attribute("width").as_double();
    for (const pugi::xml_node t : g.node().children("text")) {
      INFO(t.child_value() << " in a box " << box << " px wide");
      CHECK(text_width(t.child_value(), t.attribute("font-size").as_double()) <= box);
    }
    ++gpus;
  }
  CHECK(gpus > 0);
}
