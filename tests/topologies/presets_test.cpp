// Presets: the numbers other modules rely on, restated from docs/topology-presets.md.
#include <catch2/catch.hpp>

#include "topologies/load.hpp"
#include "topologies/node_template.hpp"
#include "topologies/presets.hpp"

using namespace burst::topo;

TEST_CASE("a800-4hca is BurstEngine's node: 8 GPUs, NVSwitch 200 GB/s, 4 HCAs shared by 2 GPUs") {
  const Topology t = make_preset("a800-4hca", 4);
  CHECK(t.gpus_per_node() == 8);
  CHECK(t.gpu_count() == 32);
  CHECK(t.nets_per_node() == 4);
  const PathInfo intra = t.intra_node_worst();
  CHECK(intra.cls == PathClass::NVL);
  CHECK(intra.bandwidth_Bps == 200e9);
  for (int g = 0; g < 8; ++g) CHECK(t.nic_of(g).gpus_sharing == 2);
  // 200 Gb/s = 25 GB/s per HCA, shared by 2 GPUs.
  CHECK(t.inter_node_bandwidth_per_gpu() == 12.5e9);
}
