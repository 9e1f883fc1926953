// Cluster variants for what-if: NVLink bandwidth and network ports per node.
#include <catch2/catch.hpp>

#include "tests/planner/planner_fixture.hpp"
#include "tests/support/error_text.hpp"
#include "topologies/variants.hpp"

using namespace burst;

TEST_CASE("with_intra_bandwidth sets the GPU-to-GPU NVLink bottleneck", "[variants]") {
  const auto a800 = test::preset("a800-4hca", 2);
  const auto faster = topo::with_intra_bandwidth(a800, 450e9, "intra_bw");
  CHECK(faster.intra_node_worst().bandwidth_Bps == Approx(450e9));
  CHECK(faster.intra_node_worst().cls == topo::PathClass::NVL);
  CHECK(faster.inter_node_bandwidth_per_gpu() == Approx(a800.inter_node_bandwidth_per_gpu()));
  CHECK(faster.nodes() == 2);
  CHECK_THAT(
      test::error_text([] { (void)topo::with_intra_bandwidth(test::preset("pcie-8gpu", 1), 450e9, "intra_bw"); }),
      Catch::Contains("no NVLink bandwidth to vary"));
}

TEST_CASE("with_nets_per_node scales the network per GPU with the ports", "[variants]") {
  // a800-4hca: 4 HCAs for 8 GPUs. 8 ports: twice the bandwidth per GPU; 2 NICs: half of it.
  const auto a800 = test::preset("a800-4hca", 2);
  const double base = a800.inter_node_bandwidth_per_gpu();
  CHECK(a800.nets_per_node() == 4);
  const auto eight = topo::with_nets_per_node(a800, 8, "nets_per_node");
  CHECK(eight.nets_per_node() == 8);
  CHECK(eight.inter_node_bandwidth_per_gpu() == Approx(2 * base));
  const auto two = topo::with_nets_per_node(a800, 2, "nets_per_node");
  CHECK(two.nets_per_node() == 2);
  CHECK(two.inter_node_bandwidth_per_gpu() == Approx(base / 2));
  CHECK(test::error_text([&] { (void)topo::with_nets_per_node(a800, 3, "nets_per_node"); }) ==
        "nets_per_node: 3 network ports per node on 'a800-4hca' (valid: a multiple or a divisor of the node's 4 NICs)");
}
