// NodeTemplate on small hand-made nodes: how paths are chosen and classified, how NICs are
// attached, and what validation reports.
#include <functional>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "topologies/detail/node_builder.hpp"
#include "topologies/detail/physical_ranges.hpp"

using namespace burst::topo;

namespace {

std::vector<std::string> problems_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const burst::Error& e) {
    std::vector<std::string> lines;
    for (const auto& p : e.problems()) lines.push_back(p.to_string());
    return lines;
  }
  return {"(no error)"};
}

}  // namespace

TEST_CASE("GPUs never forward: an NVLink chain through a third GPU is not an NVLink path") {
  NodeBuilder b;
  b.device(DeviceKind::Cpu, "cpu0");
  for (const char* g : {"gpu0", "gpu1", "gpu2"}) {
    b.device(DeviceKind::Gpu, g);
    b.link(g, "cpu0", LinkKind::Pcie, 32e9, 250e-9);
  }
  b.link("gpu0", "gpu1", LinkKind::NvLink, 100e9, 700e-9);
  b.link("gpu1", "gpu2", LinkKind::NvLink, 100e9, 700e-9);
  const auto node = b.build();
  CHECK(node->path(0, 1).cls == PathClass::NVL);
  CHECK(node->path(0, 1).hops == 1);
  CHECK(node->path(0, 2).cls == PathClass::PHB);
  CHECK(node->path(0, 2).hops == 2);
  CHECK(node->path(0, 2).bandwidth_Bps == 32e9);
}

TEST_CASE("NVLink wins over a wider PCIe path; among paths of one class the widest wins") {
  NodeBuilder b;
  b.device(DeviceKind::Gpu, "gpu0");
  b.device(DeviceKind::Gpu, "gpu1");
  b.device(DeviceKind::PcieSwitch, "narrow");
  b.device(DeviceKind::PcieSwitch, "wide");
  b.link("gpu0", "narrow", LinkKind::Pcie, 8e9, 250e-9);
  b.link("gpu1", "narrow", LinkKind::Pcie, 8e9, 250e-9);
  b.link("gpu0", "wide", LinkKind::Pcie, 32e9, 250e-9);
  b.link("gpu1", "wide", LinkKind::Pcie, 32e9, 250e-9);
  const auto pcie_only = b.build();
  CHECK(pcie_only->path(0, 1).cls == PathClass::PIX);
  CHECK(pcie_only->path(0, 1).bandwidth_Bps == 32e9);
  // Directed template links of the wide route: gpu0->wide is link 2 forwards, wide->gpu1 link 3 backwards.
  CHECK(pcie_only->route(0, 1) == std::vector<TemplateLinkDir>{2 * 2 + 0, 3 * 2 + 1});
  CHECK(pcie_only->route(1, 0) == std::vector<TemplateLinkDir>{3 * 2 + 0, 2 * 2 + 1});

  b.link("gpu0", "gpu1", LinkKind::NvLink, 20e9, 700e-9);
  const auto with_nvlink = b.build();
  CHECK(with_nvlink->path(0, 1).cls == PathClass::NVL);
  CHECK(with_nvlink->path(0, 1).bandwidth_Bps == 20e9);
}

TEST_CASE("classes: PIX through one switch, PXB through several, PHB through a CPU, SYS across sockets") {
  NodeBuilder b;
  b.device(DeviceKind::Cpu, "cpu0");
  b.device(DeviceKind::Cpu, "cpu1");
  b.link("cpu0", "cpu1", LinkKind::InterSocket, 10e9, 500e-9);
  for (const char* s : {"root0", "leaf0", "leaf1", "root1"}) b.device(DeviceKind::PcieSwitch, s);
  b.link("root0", "cpu0", LinkKind::Pcie, 32e9, 250e-9);
  b.link("leaf0", "root0", LinkKind::Pcie, 32e9, 250e-9);
  b.link("leaf1", "root0", LinkKind::Pcie, 32e9, 250e-9);
  b.link("root1", "cpu1", LinkKind::Pcie, 32e9, 250e-9);
  const char* parents[] = {"leaf0", "leaf0", "leaf1", "root1"};
  for (int g = 0; g < 4; ++g) {
    const std::string name = "gpu" + std::to_string(g);
    b.device(DeviceKind::Gpu, name);
    b.link(name, parents[g], LinkKind::Pcie, 32e9, 250e-9);
  }
  b.device(DeviceKind::Gpu, "gpu4");
  b.link("gpu4", "cpu0", LinkKind::Pcie, 32e9, 250e-9);
  const auto node = b.build();
  CHECK(node->path(0, 1).cls == PathClass::PIX);
  CHECK(node->path(0, 2).cls == PathClass::PXB);
  CHECK(node->path(0, 4).cls == PathClass::PHB);
  CHECK(node->path(0, 3).cls == PathClass::SYS);
  CHECK(node->path(0, 3).bandwidth_Bps == 10e9);
}

TEST_CASE("shared-memory ranks are SHM to each other") {
  NodeBuilder b;
  b.device(DeviceKind::Cpu, "cpu0");
  b.device(DeviceKind::Gpu, "rank0");
  b.device(DeviceKind::Gpu, "rank1");
  b.link("rank0", "cpu0", LinkKind::SharedMemory, 5e9, 500e-9);
  b.link("rank1", "cpu0", LinkKind::SharedMemory, 5e9, 500e-9);
  const auto node = b.build();
  CHECK(node->path(0, 1).cls == PathClass::SHM);
  CHECK(node->path(0, 1).latency_s == Approx(1e-6));
}

TEST_CASE("NIC attachment: best class first, then the least loaded NIC, then the lowest index") {
  NodeBuilder b;
  b.device(DeviceKind::Cpu, "cpu0");
  b.device(DeviceKind::PcieSwitch, "sw");
  b.link("sw", "cpu0", LinkKind::Pcie, 32e9, 250e-9);
  for (int g = 0; g < 4; ++g) {
    const std::string name = "gpu" + std::to_string(g);
    b.device(DeviceKind::Gpu, name);
    b.link(name, "sw", LinkKind::Pcie, 32e9, 250e-9);
  }
  b.nic("far", 1, 50e9);
  b.link("far", "cpu0", LinkKind::Pcie, 32e9, 250e-9);
  b.nic("near0", 1, 25e9);
  b.link("near0", "sw", LinkKind::Pcie, 32e9, 250e-9);
  b.nic("near1", 2, 25e9);
  b.link("near1", "sw", LinkKind::Pcie, 32e9, 250e-9);
  const auto node = b.build();
  const int near0 = node->device_index("near0"), near1 = node->device_index("near1");
  CHECK(node->nic_of(0).nic == near0);
  CHECK(node->nic_of(1).nic == near1);
  CHECK(node->nic_of(2).nic == near0);
  CHECK(node->nic_of(3).nic == near1);
  for (int g = 0; g < 4; ++g) {
    CHECK(node->nic_of(g).gpus_sharing == 2);
    CHECK(node->nic_of(g).cls == PathClass::PIX);
    CHECK(node->route_to_nic(g).size() == 2);
    CHECK(node->route_from_nic(g).size() == 2);
  }
  CHECK(node->nic_of(1).bandwidth_Bps == 50e9);
  CHECK(node->nets() == 4);
}

TEST_CASE("validation reports every problem of a node at once") {
  std::vector<Device> devices = {{DeviceKind::Cpu, "cpu0"}, {DeviceKind::Nic, "nic0"}, {DeviceKind::Cpu, "cpu0"}};
  std::vector<Link> links = {{0, 7, LinkKind::Pcie, 32e9, 0, Sharing::Shared},
                             {0, 1, LinkKind::Pcie, 0, 0, Sharing::Shared}};
  CHECK(problems_of([&] { NodeTemplate n(devices, links, "t.json:/node"); }) ==
        std::vector<std::string>{
            "t.json:/node/devices/1: NIC 'nic0' has no network bandwidth (valid: a positive port bandwidth; hint: give "
            "\"port_bandwidth\", e.g. \"200Gbps\" for HDR InfiniBand)",
            "t.json:/node/devices/2: duplicate device name 'cpu0' (hint: device names are unique in a node)",
            "t.json:/node/devices: the node has no GPU (valid: at least one device of kind \"gpu\"; hint: CPU ranks of "
            "the local topology are devices of kind \"gpu\" too)",
            "t.json:/node/links/0: link end 7 is not a device (valid: 0 to 2)",
            "t.json:/node/links/1: link bandwidth must be positive (valid: a positive bandwidth such as \"25GBps\")"});
}

TEST_CASE("a single-GPU node is valid; its self path is a local copy") {
  NodeBuilder b;
  b.device(DeviceKind::Gpu, "gpu0");
  const auto node = b.build();
  CHECK(node->gpu_count() == 1);
  CHECK(node->nic_of(0).nic == -1);
  CHECK(node->route(0, 0).empty());
  const Topology t("one", GpuSpec{"X", 1e12, 1e9, 1e11}, node, 1, Fabric{});
  CHECK(t.intra_node_worst().bandwidth_Bps == 1e11);
  CHECK(t.inter_node_bandwidth_per_gpu() == 0);
  CHECK_THROWS_AS(Topology("two", GpuSpec{"X", 1e12, 1e9, 1e11}, node, 2, Fabric{}), burst::Error);
}

TEST_CASE("values outside the physical ranges are refused with the range, not simulated") {
  NodeBuilder b;
  b.device(DeviceKind::Gpu, "gpu0");
  b.device(DeviceKind::Gpu, "gpu1");
  b.link("gpu0", "gpu1", LinkKind::NvLink, 1e-300, 2.0);  // a subnormal-looking bandwidth, a 2 s latency
  const auto lines = problems_of([&] { (void)b.build(); });
  REQUIRE(lines.size() == 2);
  CHECK_THAT(lines[0],
             Catch::Contains("link bandwidth (B/s) 1e-300 is outside the physical range (valid: 1MBps to 100TBps"));
  CHECK_THAT(lines[1], Catch::Contains("link latency (s) 2 is outside the physical range (valid: 0ns to 1s"));
}

TEST_CASE("a node of more devices than any machine is refused before any pairwise work") {
  NodeBuilder b;
  for (int g = 0; g < kMaxDevicesPerNode + 1; ++g) b.device(DeviceKind::Gpu, "gpu" + std::to_string(g));
  const auto lines = problems_of([&] { (void)b.build(); });
  REQUIRE(lines.size() == 1);
  CHECK_THAT(lines[0], Catch::Contains("1025 devices in one node (valid: at most 1024"));
}
