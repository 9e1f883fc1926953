// The host side of `burst calibrate --device cuda`, without a GPU: the measurement plan (which
// ranks pair at which ring level), the one conversion of (work, seconds) into curve points and
// of round trips into link figures, the CUDA-name -> GPU model lookup, and the file: built
// from made-up measurements, written, and read back the way `burst plan --calibration FILE`
// reads it, where it must change exactly the predictions of the GPU model and links measured.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/json_reader.hpp"
#include "runtime/calibration/curve_points.hpp"
#include "runtime/calibration/gpu_speed.hpp"
#include "runtime/calibration/ping_pong.hpp"
#include "simulator/cost_model.hpp"
#include "simulator/costs/calibration.hpp"
#include "simulator/costs/measured_links.hpp"
#include "tools/burst/gpu_calibration.hpp"
#include "topologies/hardware.hpp"
#include "topologies/presets.hpp"

namespace {

using namespace burst;

// The uncontended bandwidth of the path a -> b under `comm`: its slowest link's capacity.
double path_capacity(const sim::CommModel& comm, const topo::Topology& t, int a, int b) {
  std::vector<topo::LinkId> route;
  t.route(a, b, route);
  double slowest = 1e300;
  for (const topo::LinkId id : route) slowest = std::min(slowest, comm.capacity(t.link(id)));
  return slowest;
}

// A kernel run of `fraction` of `peak` per second, over 10 ms.
rt::KernelSpeed run_at(const char* kernel, const char* mask, std::int64_t block, double fraction, double peak) {
  return {kernel, mask, block, fraction * peak * 0.01, 0.01};
}

std::string temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("burst-gpu-calibration-test-" + name)).string();
}

}  // namespace

TEST_CASE("link pairs: intra is ranks 0 and 1 of a node, inter rank 0 and the next node's first") {
  CHECK(rt::link_pairs(1, 1).empty());
  const auto one_node = rt::link_pairs(4, 4);
  REQUIRE(one_node.size() == 1);
  CHECK((one_node[0].level == rt::RingLevel::Intra && one_node[0].a == 0 && one_node[0].b == 1));
  const auto one_per_node = rt::link_pairs(2, 1);
  REQUIRE(one_per_node.size() == 1);
  CHECK((one_per_node[0].level == rt::RingLevel::Inter && one_per_node[0].a == 0 && one_per_node[0].b == 1));
  const auto both = rt::link_pairs(16, 8);
  REQUIRE(both.size() == 2);
  CHECK((both[0].level == rt::RingLevel::Intra && both[0].b == 1));
  CHECK((both[1].level == rt::RingLevel::Inter && both[1].a == 0 && both[1].b == 8));
}

TEST_CASE("the GPU plan measures at every block size of the default curves it replaces") {
  const rt::GpuSpeedOptions plan;
  const sim::Calibration defaults = sim::default_calibration();
  const sim::ComputeCalibration& hopper = defaults.compute_for("H100-SXM5-80GB");
  const auto measured = [](const std::vector<std::int64_t>& sizes, double block) {
    return std::find(sizes.begin(), sizes.end(), static_cast<std::int64_t>(block)) != sizes.end();
  };
  for (const sim::KernelKind kind : {sim::KernelKind::AttentionForward, sim::KernelKind::AttentionBackward}) {
    for (const bool masked : {false, true}) {
      for (const auto& [block, efficiency] : hopper.kernels[sim::curve_index(kind, masked)].points) {
        CHECK(measured(plan.blocks, block));
      }
    }
  }
  for (const auto& [side, efficiency] : hopper.kernels[sim::curve_index(sim::KernelKind::Gemm, false)].points) {
    CHECK(measured(plan.gemm_sides, side));
  }
  // 32 heads at 8K: the thread blocks the default curves were measured at (curve_ctas).
  CHECK(plan.heads * 8192 / 128 == hopper.curve_ctas);
  const rt::GpuSpeedOptions quick = rt::quick_gpu_speed_options(3);
  CHECK(quick.device == 3);
  for (const std::int64_t b : quick.blocks) CHECK(measured(plan.blocks, static_cast<double>(b)));
}

TEST_CASE("link speed: latency is half the median small round trip, bandwidth what is left of the large") {
  const double latency = 4e-6, bandwidth = 200e9;
  std::vector<double> small = {9e-6, 2 * latency, 1e-3, 2 * latency - 1e-7, 1e-7};  // median: 2 latency
  const std::size_t bytes = std::size_t{64} << 20;
  const double round_trip = 2 * (latency + static_cast<double>(bytes) / bandwidth);
  const std::vector<std::pair<std::size_t, double>> fastest = {{std::size_t{1} << 20, 1e-3}, {bytes, round_trip}};
  const rt::LinkSpeed s = rt::link_speed(small, fastest);
  CHECK(s.latency_s == Approx(latency));
  CHECK(s.bandwidth_Bps == Approx(bandwidth));
}

TEST_CASE("curve points: work per second over the peak, summed per block, rounded and clamped") {
  const double peak = 1e12, memory = 2e12;
  const std::vector<rt::KernelSpeed> runs = {run_at("attn_fwd", "full", 1024, 0.25, peak),
                                             run_at("attn_fwd", "full", 1024, 0.35, peak),
                                             run_at("attn_fwd", "full", 4096, 0.61234, peak),
                                             run_at("attn_bwd", "causal", 1024, 0.2, peak),
                                             run_at("gemm", "", 2048, 3.0, peak),
                                             run_at("elementwise", "", 1, 0.8, memory)};
  const Json entry = rt::compute_entry("X", runs, {peak, memory}, "mma.sync");
  CHECK(entry["gpu"] == "X");
  CHECK(entry["attention_path"] == "mma.sync");
  CHECK(entry["attn_fwd"] == Json::parse("[[1024, 0.3], [4096, 0.612]]"));  // two 10 ms runs of one block add up
  CHECK(entry["attn_bwd_masked"] == Json::parse("[[1024, 0.2]]"));          // causal: the masked blocks' curve
  CHECK(entry["gemm"] == Json::parse("[[2048, 1.0]]"));                     // above the peak: clamped
  CHECK(entry["elementwise"] == Json::parse("[[1, 0.8]]"));                 // a fraction of the memory bandwidth
  CHECK_FALSE(entry.contains("attn_bwd"));                                  // not measured: the file keeps its default
  CHECK(rt::efficiency_point(1, 1e9, peak) == 0.001);
  CHECK_FALSE(entry.contains("attention_paths"));  // every run on the entry's own path
}

TEST_CASE("curve points: attention on another kernel path goes apart, under its name") {
  const double peak = 1e12;
  std::vector<rt::KernelSpeed> runs = {run_at("attn_fwd", "full", 1024, 0.3, peak),
                                       run_at("attn_fwd", "causal", 1024, 0.2, peak)};
  rt::KernelSpeed other = run_at("attn_fwd", "full", 1024, 0.6, peak);
  other.path = "wgmma";
  runs.push_back(other);
  const Json entry = rt::compute_entry("H100", runs, {peak, 0}, "mma.sync");
  CHECK(entry["attn_fwd"] == Json::parse("[[1024, 0.3]]"));  // the entry's own path only
  CHECK(entry["attention_paths"] == Json::parse(R"({"wgmma": {"attn_fwd": [[1024, 0.6]]}})"));
  // As a calibration file: kept apart, and the predictions' curves stay the path auto runs.
  const sim::Calibration c = sim::apply_calibration(
      sim::default_calibration(), Json{{"schema", "burst.calibration/1"}, {"compute", Json::array({entry})}}, "c.json");
  const sim::ComputeCalibration& h100 = c.compute_for("H100-SXM5-80GB");
  CHECK(h100.kernels[sim::curve_index(sim::KernelKind::AttentionForward, false)].at(1024) == Approx(0.3));
  CHECK(h100.attention_paths.at("wgmma").at("attn_fwd").at(1024) == Approx(0.6));
  const Json back = sim::calibration_to_json(c);
  CHECK(sim::apply_calibration(sim::default_calibration(), back, "back.json")
            .compute_for("H100-SXM5-80GB")
            .attention_paths.at("wgmma")
            .at("attn_fwd")
            .points == h100.attention_paths.at("wgmma").at("attn_fwd").points);
  Json bad = {{"schema", "burst.calibration/1"},
              {"compute", Json::array({{{"gpu", "H100"}, {"attention_paths", {{"wgmma", {{"gemm", 1}}}}}}})}};
  CHECK_THROWS_WITH(sim::apply_calibration(sim::default_calibration(), bad, "bad.json"),
                    Catch::Contains("bad.json:/compute/0/attention_paths/wgmma/gemm"));
}

TEST_CASE("pricing another kernel path takes its measured curves, and refuses a path not measured") {
  const double peak = 1e12;
  std::vector<rt::KernelSpeed> runs = {run_at("attn_fwd", "full", 1024, 0.3, peak)};
  rt::KernelSpeed other = run_at("attn_fwd", "full", 1024, 0.6, peak);
  other.path = "wgmma";
  runs.push_back(other);
  const Json doc{{"schema", "burst.calibration/1"},
                 {"compute", Json::array({rt::compute_entry("H100", runs, {peak, 0}, "mma.sync")})}};
  const sim::Calibration measured = sim::apply_calibration(sim::default_calibration(), doc, "c.json");
  const std::size_t fwd = sim::curve_index(sim::KernelKind::AttentionForward, false);
  const sim::Calibration wgmma = sim::with_attention_path(measured, "wgmma");
  const sim::ComputeCalibration& h100 = wgmma.compute_for("H100-SXM5-80GB");
  CHECK(h100.attention_path == "wgmma");
  CHECK(h100.kernels[fwd].at(1024) == Approx(0.6));
  CHECK(h100.attention_paths.at("mma.sync").at("attn_fwd").at(1024) == Approx(0.3));  // the file's own, kept apart
  CHECK_FALSE(h100.attention_paths.contains("wgmma"));
  // Back again, and "auto" or the file's own path change nothing.
  CHECK(sim::with_attention_path(wgmma, "mma.sync").compute_for("H100").kernels[fwd].at(1024) == Approx(0.3));
  for (const char* same : {"auto", "", "mma.sync"}) {
    CHECK(sim::with_attention_path(measured, same).compute_for("H100").kernels[fwd].at(1024) == Approx(0.3));
  }
  // Built-in curves name no path: they stay. A measured entry without the path is refused.
  const sim::Calibration defaults = sim::default_calibration();
  CHECK(sim::with_attention_path(defaults, "wgmma").compute_for("A100").kernels[fwd].at(4096) ==
        Approx(defaults.compute_for("A100").kernels[fwd].at(4096)));
  CHECK_THROWS_WITH(sim::with_attention_path(sim::with_attention_path(measured, "wgmma"), "hopper"),
                    Catch::Contains("calibration of GPU 'H100'") &&
                        Catch::Contains("no attention curves measured on kernel path hopper") &&
                        Catch::Contains("mma.sync"));
}

TEST_CASE("every GPU model is found by the name CUDA reports, and only by it") {
  std::set<std::string> names;
  for (const topo::hw::GpuModel& m : topo::hw::gpu_models()) {
    CHECK(names.insert(m.cuda_name).second);
    REQUIRE(topo::hw::gpu_by_cuda_name(m.cuda_name) == &m);
    CHECK(topo::hw::gpu_by_cuda_name(std::string(" ") + m.cuda_name + "  ") == &m);
  }
  CHECK(topo::hw::gpu_by_cuda_name("NVIDIA H100") == nullptr);
  CHECK(topo::hw::gpu_by_cuda_name("") == nullptr);
  CHECK(cli::gpu_model_of("NVIDIA H100 80GB HBM3", std::nullopt).spec.model == "H100-SXM5-80GB");
  try {
    (void)cli::gpu_model_of("NVIDIA GeForce RTX 4090", 0x2684);
    FAIL("an unknown GPU was accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("'NVIDIA GeForce RTX 4090', PCI device 0x2684") != std::string::npos);
    CHECK(std::string(e.what()).find("NVIDIA H100 80GB HBM3 (0x2330)") != std::string::npos);  // the known GPUs
  }
}

TEST_CASE("the PCI device id, read from sysfs at the GPU's address, decides the model before the name") {
  const std::filesystem::path sysfs = temp_file("sysfs");
  std::filesystem::create_directories(sysfs / "0000:3b:00.0");
  std::filesystem::create_directories(sysfs / "0000:5e:00.0");
  write_file_atomically((sysfs / "0000:3b:00.0" / "device").string(), "0x2331\n", "a fake sysfs id");
  write_file_atomically((sysfs / "0000:5e:00.0" / "device").string(), "not an id\n", "a fake sysfs id");
  const std::optional<unsigned> id = cli::pci_device_of("0000:3b:00.0", sysfs.string());
  CHECK(cli::pci_device_of("0000:5e:00.0", sysfs.string()) == std::nullopt);
  CHECK(cli::pci_device_of("0000:af:00.0", sysfs.string()) == std::nullopt);
  std::filesystem::remove_all(sysfs);
  REQUIRE(id == 0x2331u);
  // The id wins over a name that says otherwise; an id the table lacks falls back to the name.
  CHECK(cli::gpu_model_of("NVIDIA H100 80GB HBM3", id).spec.model == "H100-PCIE-80GB");
  CHECK(cli::gpu_model_of("NVIDIA H100 80GB HBM3", 0xffff).spec.model == "H100-SXM5-80GB");
}

TEST_CASE("the links are relative to the GPU model's preset, or the topology asked for if it has those GPUs") {
  const topo::hw::GpuModel& h100 = *topo::hw::gpu_by_model("H100-SXM5-80GB");
  const auto preset = cli::link_topology("", h100);
  REQUIRE(preset.has_value());
  CHECK(preset->gpu().model == "H100-SXM5-80GB");
  CHECK(preset->nodes() == 2);
  CHECK_FALSE(cli::link_topology("", *topo::hw::gpu_by_model("L4-PCIE-24GB")).has_value());
  CHECK_THROWS_AS(cli::link_topology("dgx-a100", h100), Error);
  CHECK(cli::gpu_calibration_path("/home/u/.config/burst/local.json", h100) ==
        "/home/u/.config/burst/H100-SXM5-80GB.json");
  CHECK(cli::gpu_calibration_path("", h100).empty());
}

TEST_CASE("measured links: the calibrated model prices the measured path at the measured figures") {
  for (const char* preset : {"dgx-h100", "dgx-a100", "a800-4hca"}) {
    CAPTURE(preset);
    const topo::Topology t = topo::make_preset(preset, 2, 0);
    const sim::MeasuredLink intra{0.7 * t.path(0, 1).bandwidth_Bps, 9e-6},
        inter{0.8 * t.path(0, 8).bandwidth_Bps, 14e-6};
    Json doc = {{"schema", "burst.calibration/1"}};
    doc.update(sim::measured_link_fields(t, intra, inter));
    const sim::CostModels models =
        sim::make_cost_models(sim::apply_calibration(sim::default_calibration(), doc, preset));
    CHECK(path_capacity(*models.comm, t, 0, 1) == Approx(intra.bandwidth_Bps));
    CHECK(path_capacity(*models.comm, t, 0, 8) == Approx(inter.bandwidth_Bps));
    CHECK(models.comm->latency(t.path(0, 1)) == Approx(intra.latency_s).epsilon(1e-3));
    CHECK(models.comm->latency(t.path(0, 8)) == Approx(inter.latency_s).epsilon(1e-3));
    // Only the levels given are written.
    const Json only_intra = sim::measured_link_fields(t, intra, std::nullopt);
    CHECK(only_intra["latency"].size() == 1);
    CHECK_THROWS_AS(sim::measured_link_fields(topo::make_preset(preset, 1, 0), intra, inter), Error);
  }
}

TEST_CASE("a GPU calibration file changes its model's curves and the measured links, nothing else") {
  const topo::hw::GpuModel& h100 = *topo::hw::gpu_by_model("H100-SXM5-80GB");
  const double peak = h100.spec.peak_bf16_flops;
  cli::GpuMeasurements m;
  m.cuda_name = h100.cuda_name;
  m.multiprocessors = 114;
  m.attention_path = "wgmma";
  for (const std::int64_t block : {1024, 4096}) {
    const double rise = block == 1024 ? 0.5 : 1.0;
    m.kernels.push_back(run_at("attn_fwd", "full", block, 0.41 * rise, peak));
    m.kernels.push_back(run_at("attn_bwd", "full", block, 0.31 * rise, peak));
    m.kernels.push_back(run_at("attn_fwd", "causal", block, 0.37 * rise, peak));
    m.kernels.push_back(run_at("attn_bwd", "causal", block, 0.27 * rise, peak));
    m.kernels.push_back(run_at("gemm", "", block, 0.71 * rise, peak));
  }
  m.kernels.push_back(run_at("elementwise", "", 1, 0.83, h100.spec.memory_bandwidth_Bps));
  const topo::Topology t = *cli::link_topology("", h100);
  m.intra = rt::LinkSpeed{8e-6, 0.6 * t.path(0, 1).bandwidth_Bps};
  m.inter = rt::LinkSpeed{12e-6, 0.9 * t.path(0, 8).bandwidth_Bps};
  const Json doc = cli::gpu_calibration_document(m, &t);
  CHECK_FALSE(doc.contains("local"));
  const std::string path = temp_file("h100.json");
  write_file_atomically(path, doc.dump(2), "the test calibration");
  const sim::Calibration file = sim::read_calibration_file(path);
  std::filesystem::remove(path);
  const sim::Calibration defaults = sim::default_calibration();

  const sim::ComputeCalibration& c = file.compute_for("H100-SXM5-80GB");
  CHECK(c.gpu == "H100-SXM5-80GB");
  CHECK(c.multiprocessors == m.multiprocessors);
  CHECK(c.attention_path == "wgmma");  // which kernels the curves are of
  CHECK(defaults.compute_for("H100-SXM5-80GB").attention_path.empty());
  const auto at = [&](sim::KernelKind kind, bool masked, double block) {
    return c.kernels[sim::curve_index(kind, masked)].at(block);
  };
  CHECK(at(sim::KernelKind::AttentionForward, false, 4096) == Approx(0.41));
  CHECK(at(sim::KernelKind::AttentionBackward, false, 1024) == Approx(0.155));
  CHECK(at(sim::KernelKind::AttentionForward, true, 4096) == Approx(0.37));
  CHECK(at(sim::KernelKind::AttentionBackward, true, 4096) == Approx(0.27));
  CHECK(at(sim::KernelKind::Gemm, false, 4096) == Approx(0.71));
  CHECK(at(sim::KernelKind::Elementwise, false, 0) == Approx(0.83));
  // Other models keep their curves: the H100 PCIe matches the "H100" family, not this entry.
  CHECK(file.compute_for("H100-PCIE-80GB").kernels[0].points ==
        defaults.compute_for("H100-PCIE-80GB").kernels[0].points);
  CHECK(file.compute_for("A100-SXM4-80GB").kernels[2].points ==
        defaults.compute_for("A100-SXM4-80GB").kernels[2].points);

  // The plan's models on this topology: the measured links' prices.
  const sim::CostModels models = sim::make_cost_models(file);
  CHECK(path_capacity(*models.comm, t, 0, 1) == Approx(m.intra->bandwidth_Bps));
  CHECK(path_capacity(*models.comm, t, 0, 8) == Approx(m.inter->bandwidth_Bps));
  CHECK(models.comm->latency(t.path(0, 8)) == Approx(m.inter->latency_s).epsilon(1e-3));
  // A 4K GEMM on this GPU now runs at the measured efficiency (the launch gap is far below it).
  sim::Task gemm;
  gemm.kind = sim::TaskKind::Compute;
  gemm.kernel = sim::KernelKind::Gemm;
  gemm.amount = 2.0 * 4096.0 * 4096.0 * 4096.0;
  gemm.block_q = gemm.block_k = 4096;
  CHECK(models.compute->seconds(gemm, h100.spec) == Approx(gemm.amount / (0.71 * peak)));

  // Link measurements without the topology they are relative to cannot be written.
  CHECK_THROWS_AS(cli::gpu_calibration_document(m, nullptr), Error);
}
