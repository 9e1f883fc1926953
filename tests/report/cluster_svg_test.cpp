// The cluster picture, parsed as XML: one GPU element per rank of the drawn nodes, one arrow
// per ring edge between drawn GPUs (in the class of its ring level), Ulysses groups shaded,
// large clusters elided to a few nodes, and the same plan always the same bytes. Plans are the
// golden ones under tests/data: a flat ring, a double ring, a Ulysses x ring.
#include <catch2/catch.hpp>

#include <map>

#include <pugixml.hpp>

#include "planner/detail/report/cluster_svg.hpp"
#include "planner/report/report.hpp"

using namespace burst;

namespace {

plan::Plan golden(const std::string& path) { return plan::read_plan(std::string(BURST_TEST_DATA) + "/" + path); }

struct Counts {
  std::size_t gpus, idle, flat, intra, inter, elided, groups;
};

Counts count(const std::string& svg) {
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_string(svg.c_str());
  INFO(parsed.description() << " at offset " << parsed.offset);
  REQUIRE(parsed);
  const auto n = [&](const char* cls) {
    return doc.select_nodes((std::string("//*[@class='") + cls + "']").c_str()).size();
  };
  return {n("gpu"),        n("gpu-idle"),    n("ring-flat"),    n("ring-intra"),
          n("ring-inter"), n("ring-elided"), n("ulysses-group")};
}

// Ring edges of `level` ("" for every level) with `ends` (2: both, 1: exactly one) on nodes
// below `drawn`.
std::size_t edges_drawn(const plan::Plan& p, const std::string& level, int drawn, int ends) {
  std::map<int, int> node_of;
  for (const auto& r : p.ranks) node_of[r.rank] = r.node;
  std::size_t edges = 0;
  for (const auto& ring : p.rings) {
    if (!level.empty() && ring.level != level) continue;
    for (std::size_t i = 0; i < ring.order.size(); ++i) {
      const int a = ring.order[i], b = ring.order[(i + 1) % ring.order.size()];
      edges += (node_of.at(a) < drawn ? 1 : 0) + (node_of.at(b) < drawn ? 1 : 0) == ends ? 1 : 0;
    }
  }
  return edges;
}
std::size_t edges_between_drawn(const plan::Plan& p, const std::string& level, int drawn) {
  return edges_drawn(p, level, drawn, 2);
}

}  // namespace

TEST_CASE("a flat ring over 4 nodes: every GPU drawn, one arrow per rank") {
  const plan::Plan p = golden("plans/a800x4-burst14b-1M.json");
  const Counts c = count(planner::svg::cluster_picture(p, true));
  CHECK(c.gpus == 32);
  CHECK(c.idle == 0);
  CHECK(c.flat == 32);
  CHECK(c.flat == edges_between_drawn(p, "flat", 4));
  CHECK(c.intra + c.inter + c.elided + c.groups == 0);
}

TEST_CASE("a double ring: inner rings inside the nodes, outer rings across them, in their own classes") {
  const plan::Plan p = golden("plans/h100x2-llama3-8b-512K-doc.json");
  REQUIRE(p.strategy.ring == RingKind::Double);
  const Counts c = count(planner::svg::cluster_picture(p, true));
  CHECK(c.gpus == 16);
  CHECK(c.intra == edges_between_drawn(p, "intra", 2));
  CHECK(c.inter == edges_between_drawn(p, "inter", 2));
  CHECK(c.intra == 16);
  CHECK(c.inter == 16);
  CHECK(c.flat + c.elided == 0);
}

TEST_CASE("Ulysses x ring: the head-splitting groups are shaded and each member's ring is drawn") {
  const plan::Plan p = golden("run/h100x4-llama3-8b-256K-burst-usp.json");
  REQUIRE(p.strategy.ulysses == 2);
  const Counts c = count(planner::svg::cluster_picture(p, true));
  CHECK(c.gpus == 32);
  CHECK(c.groups == 16);
  CHECK(c.flat == 32);  // two rings of 16
  CHECK(c.flat == edges_between_drawn(p, "flat", 4));
}

TEST_CASE("tensor parallelism: each node's tensor-parallel groups are shaded, inside their Ulysses groups") {
  plan::Plan p = golden("run/h100x4-llama3-8b-256K-burst-usp.json");
  // The same 32 GPUs as TP 2 x Ulysses 2 x ring 8: ranks 2k, 2k + 1 are a tensor-parallel group,
  // ranks 4k .. 4k + 3 a Ulysses group.
  p.strategy.tp = 2;
  p.strategy.cp = 8;
  pugi::xml_document doc;
  const std::string svg = planner::svg::cluster_picture(p, true);
  REQUIRE(doc.load_string(svg.c_str()));
  CHECK(doc.select_nodes("//*[@class='tp-group']").size() == 16);
  CHECK(doc.select_nodes("//*[@class='ulysses-group']").size() == 8);
  CHECK(svg.find("tensor-parallel group (2 GPUs split every layer") != std::string::npos);
  CHECK(count(planner::svg::cluster_picture(golden("run/h100x4-llama3-8b-256K-burst-usp.json"), true)).groups == 16);
}

TEST_CASE("a 64-GPU cluster draws three nodes in full and elides the rest into one box") {
  const plan::Plan p = golden("plans/a800x8-burst7b-2M.json");
  REQUIRE(p.strategy.ring == RingKind::Double);
  const std::string svg = planner::svg::cluster_picture(p, true);
  const Counts c = count(svg);
  CHECK(c.gpus == 24);
  CHECK(c.intra == edges_between_drawn(p, "intra", 3));
  CHECK(c.inter == edges_between_drawn(p, "inter", 3));
  CHECK(c.intra > 0);
  CHECK(c.inter > 0);
  // Each edge between a drawn GPU and the box: into it and back out of it.
  CHECK(c.elided == edges_drawn(p, "", 3, 1));
  CHECK(c.elided > 0);
  CHECK(svg.find("... 5 more nodes like these") != std::string::npos);
}

TEST_CASE("the cluster picture is deterministic and appears in the HTML report") {
  const plan::Plan p = golden("plans/h100x2-llama3-8b-512K-doc.json");
  CHECK(planner::svg::cluster_picture(p, false) == planner::svg::cluster_picture(p, false));
  planner::ReportInput input;
  input.plan = p;
  const std::string html = planner::render_html(input);
  pugi::xml_document doc;
  REQUIRE(doc.load_string(html.c_str()));
  CHECK(doc.select_nodes("//section[h2='The cluster']//svg//*[@class='gpu']").size() == 16);
}
