// Properties every topology must have, checked on every preset, the imported real files and a
// hand-written fat-tree: symmetric classes, routes that stay where they should, bottleneck and
// latency equal to what the route's links say, and composition across nodes.
#include <algorithm>
#include <chrono>
#include <set>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "tests/support/test_data.hpp"
#include "topologies/json_format.hpp"
#include "topologies/load.hpp"
#include "topologies/detail/nccl_xml.hpp"
#include "topologies/node_template.hpp"
#include "topologies/presets.hpp"

using namespace burst::topo;

namespace {

std::vector<Topology> every_topology() {
  std::vector<Topology> all;
  for (const auto& name : preset_names()) all.push_back(make_preset(name, 3));
  XmlImportOptions o;
  o.nodes = 2;
  all.push_back(*import_nccl_xml_file(burst::test::topology_data("aliyun-SimAI_topo_8A100_4CX6.xml"), o).topology);
  all.push_back(
      *import_nccl_xml_file(burst::test::topology_data("oci-hpc_BM.GPU.H100.8_H100-topology.xml"), o).topology);
  all.push_back(
      *import_nccl_xml_file(burst::test::topology_data("azure-azhpc-images_ncv4-topo_pre-4be0efb_pairs.xml"), o)
           .topology);
  all.push_back(read_topology_json(burst::test::topology_data("fat-tree-2x4.json")));
  return all;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

TEST_CASE("path(a, b) and path(b, a) agree on class, bandwidth and hops") {
  for (const Topology& t : every_topology()) {
    INFO(t.name());
    for (int a = 0; a < t.gpu_count(); ++a) {
      for (int b = 0; b < t.gpu_count(); ++b) {
        const PathInfo ab = t.path(a, b), ba = t.path(b, a);
        CHECK(ab.cls == ba.cls);
        CHECK(ab.bandwidth_Bps == ba.bandwidth_Bps);
        CHECK(ab.hops == ba.hops);
        CHECK((ab.cls == PathClass::NET) == (t.node_of(a) != t.node_of(b)));
      }
    }
  }
}

TEST_CASE("a route's links give the path's bottleneck, latency and hop count") {
  std::vector<LinkId> route;
  for (const Topology& t : every_topology()) {
    INFO(t.name());
    for (int a = 0; a < t.gpu_count(); ++a) {
      for (int b = 0; b < t.gpu_count(); ++b) {
        t.route(a, b, route);
        const PathInfo p = t.path(a, b);
        if (a == b) {
          CHECK(route.empty());
          continue;
        }
        double bottleneck = 1e300, latency = 0;
        for (const LinkId id : route) {
          REQUIRE(id >= 0);
          REQUIRE(id < t.link_count());
          bottleneck = std::min(bottleneck, t.link(id).bandwidth_Bps);
          latency += t.link(id).latency_s;
        }
        CHECK(static_cast<int>(route.size()) == p.hops);
        CHECK(bottleneck == p.bandwidth_Bps);
        CHECK(latency == Approx(p.latency_s).epsilon(1e-12));
        // No link is crossed twice.
        CHECK(std::set<LinkId>(route.begin(), route.end()).size() == route.size());
      }
    }
  }
}

TEST_CASE("an intra-node route crosses only links of that node; an inter-node one leaves by a NIC") {
  std::vector<LinkId> route;
  for (const Topology& t : every_topology()) {
    INFO(t.name());
    const int g = t.gpus_per_node();
    const int last = t.gpu_count() - 1;
    for (int a = 0; a < g; ++a) {
      for (int b = 0; b < g; ++b) {
        const int ga = g + a, gb = g + b;  // node 1
        t.route(ga, gb, route);
        for (const LinkId id : route) CHECK(starts_with(t.link_name(id), "n1:"));
      }
    }
    t.route(0, last, route);
    std::vector<std::string> names;
    for (const LinkId id : route) names.push_back(t.link_name(id));
    const std::string nic_a = t.node().devices()[static_cast<std::size_t>(t.nic_of(0).nic)].name;
    const std::string nic_b = t.node().devices()[static_cast<std::size_t>(t.nic_of(last).nic)].name;
    CHECK(std::count(names.begin(), names.end(), fmt::format("n0:{}-up", nic_a)) == 1);
    CHECK(std::count(names.begin(), names.end(), fmt::format("n{}:{}-down", t.nodes() - 1, nic_b)) == 1);
    CHECK(t.link(route[0]).kind != LinkKind::Network);
  }
}

TEST_CASE("link ids are dense and their names unique") {
  for (const Topology& t : every_topology()) {
    INFO(t.name());
    std::set<std::string> names;
    for (LinkId id = 0; id < t.link_count(); ++id) {
      names.insert(t.link_name(id));
      CHECK(t.link(id).bandwidth_Bps > 0);
    }
    CHECK(static_cast<int>(names.size()) == t.link_count());
    const int nics = static_cast<int>(t.node().nic_devices().size());
    CHECK(t.link_count() == t.nodes() * (2 * static_cast<int>(t.node().links().size()) + 2 * nics + 2));
  }
}

TEST_CASE("fat-tree: all inter-node traffic crosses the oversubscribed spine") {
  const Topology t = read_topology_json(burst::test::topology_data("fat-tree-2x4.json"));
  CHECK(t.fabric().kind == FabricKind::FatTree);
  CHECK(t.fabric().oversubscription == 2);
  // nic0 (1 x 100 Gb/s) + nic1 (2 x 100 Gb/s) = 37.5 GB/s, halved by oversubscription 2.
  CHECK(t.spine_bandwidth() == 37.5e9 / 2);
  std::vector<LinkId> route;
  t.route(0, 4, route);
  std::vector<std::string> names;
  for (const LinkId id : route) names.push_back(t.link_name(id));
  CHECK(std::count(names.begin(), names.end(), "n0:spine-up") == 1);
  CHECK(std::count(names.begin(), names.end(), "n1:spine-down") == 1);
  // Per GPU: min(NIC / sharing, spine / GPUs per node) = min(12.5/2, 25/2, 18.75/4) GB/s.
  CHECK(t.inter_node_bandwidth_per_gpu() == 18.75e9 / 4);
  // NVLink pairs (fatpipe) and PCIe elsewhere; gpu2's narrow 16 GB/s PCIe link bounds the PHB pairs.
  CHECK(t.path(0, 1).cls == PathClass::NVL);
  CHECK(t.path(0, 2).cls == PathClass::PHB);
  CHECK(t.path(0, 2).bandwidth_Bps == 16e9);
  CHECK(t.path(1, 3).bandwidth_Bps == 32e9);
}

TEST_CASE("rail-optimised: the same rail stays off the spine, different rails cross it") {
  const Topology t = make_preset("dgx-h100", 2);
  std::vector<LinkId> route;
  auto crosses_spine = [&](int a, int b) {
    t.route(a, b, route);
    return std::any_of(route.begin(), route.end(),
                       [&](LinkId id) { return t.link_name(id).find("spine") != std::string::npos; });
  };
  CHECK(t.nic_rail(3) == t.nic_rail(8 + 3));
  CHECK_FALSE(crosses_spine(3, 8 + 3));
  CHECK(crosses_spine(3, 8 + 4));
  CHECK(t.path(3, 11).hops + 2 == t.path(3, 12).hops);
}

TEST_CASE("inter-node path: NET, bottleneck of the GPU->NIC paths, the NICs and the spine; fabric latency added") {
  const Topology t = make_preset("a800-4hca", 2);
  const PathInfo p = t.path(0, 8);
  CHECK(p.cls == PathClass::NET);
  CHECK(p.bandwidth_Bps == 25e9);
  // gpu -> pcie-sw -> nic on each side (250 ns per PCIe link) plus one fabric traversal.
  CHECK(p.latency_s == Approx(4 * 250e-9 + 2e-6));
}

TEST_CASE("a 128-node x 8-GPU topology builds in milliseconds and routes without allocating") {
  const auto start = std::chrono::steady_clock::now();
  LoadOptions big;
  big.nodes = 128;
  const Topology t = load_topology("dgx-h100", big);
  const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(t.gpu_count() == 1024);
  CHECK(build_s < 0.05);
  std::vector<LinkId> route;
  route.reserve(64);
  const LinkId* storage = route.data();
  for (int a = 0; a < t.gpu_count(); a += 7) {
    for (int b = 0; b < t.gpu_count(); b += 13) {
      t.route(a, b, route);
      REQUIRE(route.data() == storage);
    }
  }
}

TEST_CASE("the hash is stable for equal topologies and differs otherwise") {
  CHECK(make_preset("a800-4hca", 4).hash() == make_preset("a800-4hca", 4).hash());
  CHECK(make_preset("a800-4hca", 4).hash() != make_preset("a800-4hca", 2).hash());
  CHECK(make_preset("a800-4hca").hash().size() == 16);
}
