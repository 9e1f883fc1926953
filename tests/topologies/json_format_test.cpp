// Our JSON format: parse(to_json(t)) == t for every preset, units written in the values, and
// loading through load_topology with --nodes.
#include <catch2/catch.hpp>

#include "tests/support/test_data.hpp"
#include "topologies/json_format.hpp"
#include "topologies/load.hpp"
#include "topologies/node_template.hpp"
#include "topologies/presets.hpp"

using namespace burst::topo;

namespace {

LoadOptions with_nodes(int nodes) {
  LoadOptions o;
  o.nodes = nodes;
  return o;
}

void check_same(const Topology& a, const Topology& b) {
  CHECK(a.name() == b.name());
  CHECK(a.nodes() == b.nodes());
  CHECK(a.gpu().model == b.gpu().model);
  CHECK(a.gpu().peak_bf16_flops == b.gpu().peak_bf16_flops);
  CHECK(a.gpu().memory_bytes == b.gpu().memory_bytes);
  CHECK(a.gpu().memory_bandwidth_Bps == b.gpu().memory_bandwidth_Bps);
  CHECK(a.fabric().kind == b.fabric().kind);
  CHECK(a.fabric().latency_s == b.fabric().latency_s);
  CHECK(a.fabric().oversubscription == b.fabric().oversubscription);
  REQUIRE(a.node().devices().size() == b.node().devices().size());
  for (std::size_t i = 0; i < a.node().devices().size(); ++i) {
    const Device &x = a.node().devices()[i], &y = b.node().devices()[i];
    CHECK(x.name == y.name);
    CHECK(x.kind == y.kind);
    CHECK(x.ports == y.ports);
    CHECK(x.port_bandwidth_Bps == y.port_bandwidth_Bps);
  }
  REQUIRE(a.node().links().size() == b.node().links().size());
  for (std::size_t i = 0; i < a.node().links().size(); ++i) {
    const Link &x = a.node().links()[i], &y = b.node().links()[i];
    CHECK(x.a == y.a);
    CHECK(x.b == y.b);
    CHECK(x.kind == y.kind);
    CHECK(x.bandwidth_Bps == y.bandwidth_Bps);
    CHECK(x.latency_s == y.latency_s);
    CHECK(x.sharing == y.sharing);
  }
  CHECK(a.hash() == b.hash());
  CHECK(a.summary_json() == b.summary_json());
}

}  // namespace

TEST_CASE("parse(to_json(t)) rebuilds every preset exactly") {
  for (const auto& name : preset_names()) {
    INFO(name);
    const Topology t = make_preset(name, 3);
    check_same(parse_topology_json(t.to_json(), "round-trip"), t);
    // The text we write to files parses back the same way.
    check_same(parse_topology_json(burst::parse_json_text(dump_topology_json(t), "text"), "text"), t);
  }
}

TEST_CASE("quantities are written with their units") {
  const burst::Json j = make_preset("a800-4hca").to_json();
  CHECK(j["schema"] == "burst.topology/1");
  CHECK(j["gpu"]["peak_bf16"] == "312TFLOPS");
  CHECK(j["gpu"]["memory"] == "80GiB");
  CHECK(j["fabric"]["latency"] == "2us");
  bool found_nvlink = false;
  for (const auto& l : j["node"]["links"]) {
    if (l["kind"] == "nvlink") {
      found_nvlink = true;
      CHECK(l["bandwidth"] == "200GBps");
      CHECK(l["latency"] == "350ns");
    }
  }
  CHECK(found_nvlink);
  CHECK(j["node"]["devices"].back()["port_bandwidth"] == "25GBps");
}

TEST_CASE("a known GPU model fills in its spec; links default their latency and sharing") {
  const Topology t = read_topology_json(burst::test::topology_data("fat-tree-2x4.json"));
  CHECK(t.gpu().model == "A100-PCIE-80GB");
  CHECK(t.gpu().peak_bf16_flops == 312e12);
  const Link& gpu0_sw0 = t.node().links()[2];
  CHECK(gpu0_sw0.latency_s == Approx(250e-9));
  CHECK(gpu0_sw0.sharing == Sharing::Shared);
  CHECK(t.node().links()[8].sharing == Sharing::FatPipe);
}

TEST_CASE("load_topology: presets, JSON files and NCCL XML, with --nodes") {
  CHECK(load_topology("a800-4hca").nodes() == 1);
  CHECK(load_topology("a800-4hca", with_nodes(4)).gpu_count() == 32);
  CHECK(load_topology(burst::test::topology_data("fat-tree-2x4.json")).nodes() == 2);
  CHECK(load_topology(burst::test::topology_data("fat-tree-2x4.json"), with_nodes(5)).nodes() == 5);
  std::vector<std::string> notes;
  LoadOptions p4d = with_nodes(2);
  p4d.nvlink_from = "dgx-a100";
  p4d.nic_speed = "100Gbps";
  p4d.notes = &notes;
  const Topology xml = load_topology(burst::test::topology_data("aws-ofi-nccl_p4d-24xl-topo.xml"), p4d);
  CHECK(xml.gpu_count() == 16);
  CHECK(notes.size() == 6);  // the completion, 4 NICs given --nic-speed, and "a skeleton"
  CHECK(xml.nic_of(0).bandwidth_Bps == 12.5e9);
  LoadOptions local = with_nodes(2);
  local.per_node = 3;
  CHECK(load_topology("local", local).gpu_count() == 6);
}
