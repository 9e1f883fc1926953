// The predicted-timeline picture, parsed as XML: one group per rank drawn, one bar per compute
// task and per send, the exposed time as the gaps of each phase's compute lane.
#include <catch2/catch.hpp>

#include <pugixml.hpp>

#include "planner/detail/report/timeline_svg.hpp"

using namespace burst;

namespace {

// Two ranks; forward 0..10 ms, backward 10..30 ms. Rank 0 computes 0-4, 5-10, 10-30 (one gap
// in the forward); rank 1 computes 2-10 and 12-28 (gaps at the start of each phase and the
// end of the backward).
planner::Timeline sample() {
  planner::Timeline t;
  t.ranks = {0, 1};
  t.world = 8;
  t.forward_s = 0.010;
  t.backward_s = 0.020;
  t.bars = {{0, false, 0.000, 0.004}, {0, false, 0.005, 0.010}, {0, false, 0.010, 0.030},
            {0, true, 0.000, 0.002},  {0, true, 0.004, 0.006},  {1, false, 0.002, 0.010},
            {1, false, 0.012, 0.028}, {1, true, 0.001, 0.003},  {5, false, 0.0, 0.030}};  // rank 5: not drawn
  return t;
}

std::size_t count(const pugi::xml_document& doc, const char* xpath) { return doc.select_nodes(xpath).size(); }

}  // namespace

TEST_CASE("the timeline draws each rank's compute, sends and exposed gaps") {
  const std::string svg = planner::svg::timeline_picture(sample(), true);
  pugi::xml_document doc;
  REQUIRE(doc.load_string(svg.c_str()));
  CHECK(count(doc, "//*[@class='timeline-rank']") == 2);
  CHECK(count(doc, "//*[@class='compute']/rect") == 5);
  CHECK(count(doc, "//*[@class='send']/rect") == 3);
  CHECK(count(doc, "//*[@class='exposed']/rect") == 4);  // rank 0: 4-5; rank 1: 0-2, 10-12, 28-30
  CHECK(svg.find("milliseconds") != std::string::npos);
  CHECK(svg == planner::svg::timeline_picture(sample(), true));
}
