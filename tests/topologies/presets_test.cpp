// Presets: the figures other modules rely on, restated from docs/topology-presets.md.
#include <cstdlib>
#include <fstream>
#include <functional>
#include <set>

#include <catch2/catch.hpp>

#include "tests/support/error_text.hpp"

#include "common/error.hpp"
#include "topologies/json_format.hpp"
#include "topologies/local_calibration.hpp"
#include "topologies/node_template.hpp"
#include "topologies/presets.hpp"

using namespace burst::topo;

namespace {

constexpr double GiB = 1024.0 * 1024.0 * 1024.0;

using burst::test::error_text;

// Points BURST_LOCAL_CALIBRATION at a file for the lifetime of the object.
struct CalibrationFile {
  std::string path;
  explicit CalibrationFile(const std::string& text) : path("burst_topologies_test_local.json") {
    std::ofstream(path) << text;
    setenv("BURST_LOCAL_CALIBRATION", path.c_str(), 1);
  }
  ~CalibrationFile() {
    unsetenv("BURST_LOCAL_CALIBRATION");
    std::remove(path.c_str());
  }
};

}  // namespace

TEST_CASE("a800-4hca is BurstEngine's node: 8 GPUs, NVSwitch 200 GB/s, 4 HCAs shared by 2 GPUs") {
  const Topology t = make_preset("a800-4hca", 4);
  CHECK(t.gpus_per_node() == 8);
  CHECK(t.gpu_count() == 32);
  CHECK(t.nets_per_node() == 4);
  CHECK(t.gpu().model == "A800-SXM4-80GB");
  CHECK(t.gpu().peak_bf16_flops == 312e12);
  CHECK(t.gpu().memory_bytes == 80 * GiB);
  const PathInfo intra = t.intra_node_worst();
  CHECK(intra.cls == PathClass::NVL);
  CHECK(intra.bandwidth_Bps == 200e9);
  for (int g = 0; g < t.gpu_count(); ++g) CHECK(t.nic_of(g).gpus_sharing == 2);
  // 200 Gb/s = 25 GB/s per HCA, shared by 2 GPUs.
  CHECK(t.inter_node_bandwidth_per_gpu() == 12.5e9);
  const auto s = t.summary_json();
  CHECK(s["nets_per_node"] == 4);
  CHECK(s["intra_node"]["class"] == "NVL");
  CHECK(s["intra_node"]["bandwidth_Bps"] == 200e9);
  CHECK(s["inter_node"]["bandwidth_Bps_per_gpu"] == 12.5e9);
  CHECK(s["inter_node"]["nic_sharing"] == 2);
  CHECK(s["gpus"] == 32);
}

TEST_CASE("every GPU preset: GPU count, NVLink bandwidth, nets and per-GPU network bandwidth") {
  struct Expect {
    const char* name;
    const char* model;
    double peak, memory;
    PathClass worst;
    double intra_Bps;
    int nets, sharing;
    double inter_Bps;
  };
  // inter = NIC bandwidth / GPUs sharing it (the PCIe path to the NIC is wider everywhere).
  const Expect table[] = {
      {"a800-4hca", "A800-SXM4-80GB", 312e12, 80 * GiB, PathClass::NVL, 200e9, 4, 2, 25e9 / 2},
      {"dgx-a100", "A100-SXM4-80GB", 312e12, 80 * GiB, PathClass::NVL, 300e9, 8, 1, 25e9},
      {"dgx-a100-40g", "A100-SXM4-40GB", 312e12, 40 * GiB, PathClass::NVL, 300e9, 8, 1, 25e9},
      {"dgx-h100", "H100-SXM5-80GB", 989e12, 80 * GiB, PathClass::NVL, 450e9, 8, 1, 50e9},
      {"h200", "H200-SXM-141GB", 989e12, 141e9, PathClass::NVL, 450e9, 8, 1, 50e9},
      {"h800", "H800-SXM5-80GB", 989e12, 80 * GiB, PathClass::NVL, 200e9, 8, 1, 50e9},
      // No NVLink: the worst pair crosses sockets, limited by the 10 GB/s inter-socket link.
      {"pcie-8gpu", "A100-PCIE-80GB", 312e12, 80 * GiB, PathClass::SYS, 10e9, 2, 4, 25e9 / 4},
  };
  for (const Expect& e : table) {
    INFO(e.name);
    const Topology t = make_preset(e.name, 2);
    CHECK(t.nodes() == 2);
    CHECK(t.gpus_per_node() == 8);
    CHECK(t.gpu().model == e.model);
    CHECK(t.gpu().peak_bf16_flops == e.peak);
    CHECK(t.gpu().memory_bytes == e.memory);
    CHECK(t.intra_node_worst().cls == e.worst);
    CHECK(t.intra_node_worst().bandwidth_Bps == e.intra_Bps);
    CHECK(t.nets_per_node() == e.nets);
    CHECK(t.nic_of(0).gpus_sharing == e.sharing);
    CHECK(t.inter_node_bandwidth_per_gpu() == e.inter_Bps);
    CHECK(t.fabric().kind == FabricKind::RailOptimized);
  }
}

TEST_CASE("pcie-8gpu classes: PIX on a switch, PHB across switches of a socket, SYS across sockets") {
  const Topology t = make_preset("pcie-8gpu");
  CHECK(t.path(0, 1).cls == PathClass::PIX);
  CHECK(t.path(0, 2).cls == PathClass::PHB);
  CHECK(t.path(0, 4).cls == PathClass::SYS);
  CHECK(t.path(6, 7).cls == PathClass::PIX);
  CHECK(t.nic_of(0).cls == PathClass::PHB);
  CHECK(t.nic_of(0).nic != t.nic_of(4).nic);
}

TEST_CASE("DGX-style presets give every GPU its own HCA on its PCIe switch") {
  const Topology t = make_preset("dgx-h100");
  std::set<int> nics;
  for (int g = 0; g < 8; ++g) {
    CHECK(t.nic_of(g).cls == PathClass::PIX);
    nics.insert(t.nic_of(g).nic);
  }
  CHECK(nics.size() == 8);
}

TEST_CASE("local preset: K ranks per virtual node over shared memory, defaults without a calibration") {
  unsetenv("BURST_LOCAL_CALIBRATION");
  setenv("XDG_CONFIG_HOME", "/nonexistent-burst-test", 1);
  setenv("HOME", "/nonexistent-burst-test", 1);
  const Topology two = make_preset("local", 3);
  CHECK(two.gpus_per_node() == 2);
  CHECK(two.gpu_count() == 6);
  CHECK(two.gpu().model == "cpu-rank");
  CHECK(two.gpu().optimizer_params_per_s == 0);  // not measured: the model's GPU formulas
  CHECK(two.intra_node_worst().cls == PathClass::SHM);
  CHECK(two.intra_node_worst().bandwidth_Bps == LocalCalibration{}.intra_bandwidth_Bps);
  const Topology four = make_preset("local", 1, 4);
  CHECK(four.gpus_per_node() == 4);
  // One loopback NIC shared by all ranks of the node.
  CHECK(four.nic_of(0).gpus_sharing == 4);
  CHECK(four.inter_node_bandwidth_per_gpu() == LocalCalibration{}.inter_bandwidth_Bps / 4);
  const Topology one = make_preset("local", 2, 1);
  CHECK(one.intra_node_worst().bandwidth_Bps == one.gpu().memory_bandwidth_Bps);
}

TEST_CASE("local preset reads its speeds from the calibration file") {
  const CalibrationFile file(R"({"schema": "burst.calibration/1",
    "local": {"compute_flops_per_rank": "50GFLOPS", "intra_bandwidth": "8GBps", "inter_bandwidth": "3GBps",
              "inter_latency": "7us", "memory_per_rank": "4GiB", "optimizer_params_per_s_per_rank": 4.5e7}})");
  CHECK(find_local_calibration() == file.path);
  const Topology t = make_preset("local", 2);
  CHECK(t.gpu().peak_bf16_flops == 50e9);
  CHECK(t.gpu().optimizer_params_per_s == 4.5e7);
  // Kept in the topology's document, so a plan's stored cluster prices the optimizer alike.
  const Topology back = parse_topology_json(t.to_json(), "round-trip");
  CHECK(back.gpu().optimizer_params_per_s == 4.5e7);
  CHECK_FALSE(make_preset("dgx-h100").to_json()["gpu"].contains("optimizer_params_per_s"));
  CHECK(t.gpu().memory_bytes == 4 * GiB);
  CHECK(t.intra_node_worst().bandwidth_Bps == 8e9);
  CHECK(t.inter_node_bandwidth_per_gpu() == 3e9 / 2);
  CHECK(t.fabric().latency_s == 7e-6);
}

TEST_CASE("a bad calibration file is reported with every problem") {
  const CalibrationFile file(R"({"schema": "burst.calibration/1",
    "local": {"intra_bandwidth": "8 GB", "inter_bandwith": "3GBps", "optimizer_params_per_s_per_rank": 0}})");
  const std::string text = error_text([] { (void)make_preset("local"); });
  CHECK_THAT(text, Catch::Contains(file.path + ":/local/inter_bandwith: unknown field 'inter_bandwith'"));
  CHECK_THAT(text, Catch::Contains("did you mean 'inter_bandwidth'?"));
  CHECK_THAT(text, Catch::Contains(file.path + ":/local/intra_bandwidth: '8 GB': unknown unit 'GB'"));
  CHECK_THAT(text, Catch::Contains(file.path + ":/local/optimizer_params_per_s_per_rank: must be positive"));
}

TEST_CASE("preset names: unknown names get a did-you-mean, --per-node is for local only") {
  CHECK(preset_names() == std::vector<std::string>{"a800-4hca", "dgx-a100", "dgx-a100-40g", "dgx-h100", "h200", "h800",
                                                   "pcie-8gpu", "local"});
  CHECK(
      error_text([] { (void)make_preset("dgx-h10"); }) ==
      "topology: unknown preset 'dgx-h10' (valid: a800-4hca, dgx-a100, dgx-a100-40g, dgx-h100, h200, h800, pcie-8gpu, "
      "local; hint: did you mean 'dgx-h100'?)");
  CHECK(error_text([] { (void)make_preset("dgx-h100", 1, 4); }) ==
        "--per-node: applies to the 'local' preset only, not 'dgx-h100' (hint: GPU presets have a fixed number of GPUs "
        "per node)");
  CHECK_THAT(error_text([] { (void)make_preset("h200", 0); }), Catch::Contains("--nodes: 0 nodes (valid: 1 or more)"));
}

namespace {

// Two H100 SXM GPUs on NVLink, as probe_local_gpus (tools/burst/local_gpus.hpp) reports them.
LocalGpus h100s(int count, double nvlink_Bps) {
  LocalGpus g;
  g.count = count;
  g.spec = {"H100-SXM5-80GB", 989e12, 80 * GiB, 3350e9};
  g.nvlink_Bps = nvlink_Bps;
  g.pcie_Bps = 63e9;
  return g;
}

}  // namespace

TEST_CASE("local on a GPU machine: a rank a GPU, joined by NVLink where the GPUs have it, else PCIe") {
  const LocalGpus gpus = h100s(2, 450e9);
  const Topology t = make_preset("local", 1, 0, &gpus);
  CHECK(t.gpus_per_node() == 2);  // a rank per GPU by default
  CHECK(t.gpu().model == "H100-SXM5-80GB");
  CHECK(t.gpu().peak_bf16_flops == 989e12);
  CHECK(t.path(0, 1).cls == PathClass::NVL);
  CHECK(t.path(0, 1).bandwidth_Bps == 450e9);
  const LocalGpus pcie = h100s(2, 0);
  const Topology p = make_preset("local", 1, 0, &pcie);
  CHECK(p.path(0, 1).cls != PathClass::NVL);
  CHECK(p.path(0, 1).bandwidth_Bps == 63e9);
  // Without GPUs, local is CPU ranks, as before.
  CHECK(make_preset("local", 1, 0, nullptr).gpu().model == kLocalGpuModel);
}

TEST_CASE(
    "local with more ranks than GPUs: the ranks share the first GPU, each a share of it, joined through its memory") {
  const LocalGpus gpu = h100s(1, 0);
  const Topology t = make_preset("local", 1, 4, &gpu);
  CHECK(t.gpus_per_node() == 4);
  CHECK(t.gpu().model == "H100-SXM5-80GB");  // the model's calibration curves (fractions of its peak) still apply
  CHECK(t.gpu().peak_bf16_flops == Approx(989e12 / 4));
  CHECK(t.gpu().memory_bytes == Approx(80 * GiB / 4));
  CHECK(t.gpu().memory_bandwidth_Bps == Approx(3350e9 / 4));
  CHECK(t.path(0, 3).cls == PathClass::SHM);
  CHECK(t.path(0, 3).bandwidth_Bps == Approx(3350e9 / 2));  // a device copy reads and writes
  const Topology two_nodes = make_preset("local", 2, 2, &gpu);
  CHECK(two_nodes.gpu_count() == 4);
  CHECK(two_nodes.inter_node_bandwidth_per_gpu() > 0);
}
