// Cost models: efficiency curves (log-linear interpolation, clamping), GPU family matching,
// the two compute and two comm models, names, and calibration files with their errors.
#include <cmath>
#include <cstdio>
#include <fstream>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "simulator/cost_model.hpp"
#include "simulator/costs/calibration.hpp"
#include "test_topologies.hpp"

using namespace burst;
using namespace burst::sim;

namespace {

Task compute_task(KernelKind kernel, double flops, std::int32_t bq, std::int32_t bk) {
  Task t;
  t.kind = TaskKind::Compute;
  t.kernel = kernel;
  t.amount = flops;
  t.block_q = bq;
  t.block_k = bk;
  return t;
}

std::vector<std::string> wheres(const Error& e) {
  std::vector<std::string> out;
  for (const auto& p : e.problems()) out.push_back(p.where);
  return out;
}

}  // namespace

TEST_CASE("efficiency curves interpolate in log2 of the block and clamp at the ends") {
  EfficiencyCurve c{{{1024, 0.4}, {4096, 0.8}}};
  CHECK(c.at(1024) == Approx(0.4));
  CHECK(c.at(4096) == Approx(0.8));
  // 2048 is halfway between 1024 and 4096 in log2: 0.4 + (0.8 - 0.4) / 2.
  CHECK(c.at(2048) == Approx(0.6));
  CHECK(c.at(16) == Approx(0.4));       // clamped below
  CHECK(c.at(1 << 20) == Approx(0.8));  // clamped above
  CHECK(c.at(0) == Approx(0.8));        // no block size known: the large-block end
}

TEST_CASE("roofline: seconds = flops / (peak x efficiency(min(block_q, block_k)))") {
  const CostModels m = make_cost_models("roofline", "ideal");
  const Calibration cal = default_calibration();
  topo::GpuSpec a800 = test::test_gpu("A800-SXM4-80GB");
  a800.peak_bf16_flops = 312e12;
  a800.memory_bandwidth_Bps = 2039e9;
  const Task fwd = compute_task(KernelKind::AttentionForward, 1e12, 8192, 2048);
  const double eff = cal.compute_for("A800-SXM4-80GB").kernels[0].at(2048);
  CHECK(eff == Approx(0.65));
  CHECK(m.compute->seconds(fwd, a800) == Approx(1e12 / (312e12 * eff)));
  // Zero-FLOP tasks take no time; elementwise tasks move bytes at the HBM copy rate (1.61 of
  // 2.039 TB/s on an A100).
  CHECK(m.compute->seconds(compute_task(KernelKind::Gemm, 0, 4096, 4096), a800) == 0);
  CHECK(m.compute->seconds(compute_task(KernelKind::Elementwise, 1e9, 0, 0), a800) == Approx(1e9 / 1.61e12));
}

TEST_CASE("roofline: masked blocks, the step's epilogue and the launch gap each cost their share") {
  const CostModels m = make_cost_models("roofline", "ideal");
  const Calibration calibration = default_calibration();
  const ComputeCalibration& a100 = calibration.compute_for("A100-SXM4-80GB");
  topo::GpuSpec gpu = test::test_gpu("A100-SXM4-80GB");
  gpu.peak_bf16_flops = 312e12;
  gpu.memory_bandwidth_Bps = 2039e9;
  Task full = compute_task(KernelKind::AttentionForward, 1e12, 8192, 8192);
  Task masked = full;
  masked.masked = true;
  // The causal 8K run of ring-flash-attention's README: 373.4 it/s of 2 x 8192^2 x 128 x 32 FLOPs.
  const double causal_8k = 2.0 * 8192 * 8192 * 128 * 32 * 373.4 / 312e12;
  CHECK(a100.kernels[curve_index(KernelKind::AttentionForward, true)].at(8192) == Approx(causal_8k));
  CHECK(m.compute->seconds(masked, gpu) == Approx(1e12 / (312e12 * causal_8k)));
  CHECK(m.compute->seconds(masked, gpu) > m.compute->seconds(full, gpu));
  // The merge after the kernel streams its bytes, as a kernel of its own.
  Task merged = full;
  merged.epilogue_bytes = 1e9;
  CHECK(m.compute->seconds(merged, gpu) == Approx(m.compute->seconds(full, gpu) + 1e9 / 1.61e12));
  // No kernel is shorter than the launch gap.
  CHECK(m.compute->seconds(compute_task(KernelKind::Gemm, 1e3, 4096, 4096), gpu) == Approx(a100.launch_gap_s));
  CHECK(a100.launch_gap_s == Approx(5e-6));
}

TEST_CASE("parallelism: few thread blocks per SM lose the last wave, masked ones their tail") {
  const Calibration calibration = default_calibration();
  const ComputeCalibration& a100 = calibration.compute_for("A100");
  REQUIRE(a100.multiprocessors == 108);
  // At the curves' own 2048 blocks, and above, the curves stand.
  CHECK(a100.parallelism(2048, true) == Approx(1));
  CHECK(a100.parallelism(1e6, false) == 1);
  CHECK(a100.parallelism(0, true) == 1);  // unknown
  // Full blocks: 162 blocks on 108 SMs run in 2 waves of which 1.5 are busy.
  CHECK(a100.parallelism(162, false) == Approx((1.5 / 2) / ((2048.0 / 108) / 19)));
  // Masked: n / (n + 2) against the curve's 18.96 / 20.96. Five heads of a causal 8K block
  // (320 blocks) keep two thirds, as ring-flash-attention's 5-head table shows against its
  // 32-head one (1545.9 x 5 vs 373.4 x 32 it/s: 0.65).
  const double n = 320.0 / 108, ref = 2048.0 / 108;
  CHECK(a100.parallelism(320, true) == Approx((n / (n + 2)) / (ref / (ref + 2))));
  CHECK(a100.parallelism(320, true) == Approx(1545.9 * 5 / (373.4 * 32)).epsilon(0.03));
  Task task = compute_task(KernelKind::AttentionForward, 1e12, 8192, 8192);
  task.masked = true;
  task.lanes = 5;
  const CostModels m = make_cost_models("roofline", "ideal");
  Task wide = task;
  wide.lanes = 32;
  topo::GpuSpec gpu = test::test_gpu("A100-SXM4-80GB");
  CHECK(m.compute->seconds(task, gpu) / m.compute->seconds(wide, gpu) == Approx(1 / a100.parallelism(320, true)));
}

TEST_CASE("GPU families: the longest matching pattern wins, '*' is the fallback") {
  const Calibration cal = default_calibration();
  CHECK(cal.compute_for("A100-SXM4-80GB").gpu == "*");
  CHECK(cal.compute_for("H100-SXM5-80GB").gpu == "H100");
  CHECK(cal.compute_for("H800-SXM5-80GB").gpu == "H800");
  // Hopper's full-block forward at 8K is the Azure ND H100 v5 FA2 run, 327.9 of 989 TFLOPS.
  CHECK(cal.compute_for("H100").kernels[0].at(8192) == Approx(327.9 / 989.0));
  CHECK(cal.compute_for("H100").multiprocessors == 132);
}

TEST_CASE("peak model: seconds = flops / peak") {
  const CostModels m = make_cost_models("peak", "ideal");
  CHECK(m.compute->name() == "peak");
  CHECK(m.compute->seconds(compute_task(KernelKind::AttentionBackward, 5e13, 512, 512), test::test_gpu()) ==
        Approx(0.5));
  const topo::GpuSpec gpu = test::test_gpu();
  CHECK(m.compute->seconds(compute_task(KernelKind::Elementwise, 1e9, 0, 0), gpu) ==
        Approx(1e9 / gpu.memory_bandwidth_Bps));
}

TEST_CASE("calibrated comm derates links by kind and adds a software latency per path class") {
  const CostModels cal = make_cost_models("roofline", "calibrated");
  const CostModels ideal = make_cost_models("roofline", "ideal");
  const topo::DirectedLink nvlink{topo::LinkKind::NvLink, 300e9, 0, topo::Sharing::Shared};
  const topo::DirectedLink ib{topo::LinkKind::Network, 25e9, 1e-6, topo::Sharing::Shared};
  CHECK(cal.comm->capacity(nvlink) == Approx(300e9 * 0.658));
  CHECK(cal.comm->capacity(ib) == Approx(25e9 * 0.984));
  CHECK(ideal.comm->capacity(nvlink) == 300e9);
  const topo::PathInfo net{topo::PathClass::NET, 25e9, 2e-6, 6};
  CHECK(cal.comm->latency(net) == Approx(3.8e-6 + 2e-6));
  CHECK(ideal.comm->latency(net) == Approx(2e-6));
}

TEST_CASE("model names are listed and unknown ones fail with the valid names") {
  CHECK(compute_model_names() == std::vector<std::string>{"roofline", "peak"});
  CHECK(comm_model_names() == std::vector<std::string>{"calibrated", "ideal"});
  try {
    (void)make_cost_models("rooflin", "fast");
    FAIL("expected an error");
  } catch (const Error& e) {
    REQUIRE(e.problems().size() == 2);
    CHECK(e.problems()[0].valid == "roofline, peak");
    CHECK(e.problems()[0].hint == "did you mean 'roofline'?");
    CHECK(e.problems()[1].where == "--comm-model");
  }
}

TEST_CASE("a calibration document overrides curves, link efficiencies and latencies") {
  const Json doc = parse_json_text(R"({
    "schema": "burst.calibration/1",
    "compute": [{"gpu": "H100", "attn_fwd": [["1K", 0.5], ["8K", 0.75]]},
                {"gpu": "MI300", "gemm": [[4096, 0.6]]}],
    "link_efficiency": {"nvlink": 0.7},
    "latency": {"NET": "5us"}})",
                                   "cal.json");
  const Calibration c = apply_calibration(default_calibration(), doc, "cal.json");
  CHECK(c.compute_for("H100-SXM5").kernels[0].at(8192) == Approx(0.75));
  CHECK(c.compute_for("H100-SXM5").kernels[1].at(8192) ==
        Approx(default_calibration().compute_for("H100").kernels[1].at(8192)));
  // A new family starts from "*" and replaces only the curves it names.
  CHECK(c.compute_for("MI300X").gpu == "MI300");
  CHECK(c.compute_for("MI300X").kernels[2].at(1) == Approx(0.6));
  CHECK(c.compute_for("MI300X").kernels[0].at(8192) == Approx(0.72));
  CHECK(c.link_efficiency[static_cast<int>(topo::LinkKind::NvLink)] == 0.7);
  CHECK(c.latency_s[static_cast<int>(topo::PathClass::NET)] == Approx(5e-6));
  CHECK(c.latency_s[static_cast<int>(topo::PathClass::NVL)] == Approx(3.1e-6));
}

TEST_CASE("a calibration sets launch gaps and parallelism; a measured kernel serves its masked blocks too") {
  const Json doc = parse_json_text(R"({
    "schema": "burst.calibration/1",
    "compute": [{"gpu": "MI300", "attn_fwd": [["8K", 0.5]], "launch_gap": "7us", "multiprocessors": 304,
                 "tail_ctas_per_sm": 3}]})",
                                   "cal.json");
  const Calibration c = apply_calibration(default_calibration(), doc, "cal.json");
  const ComputeCalibration& mi = c.compute_for("MI300X");
  CHECK(mi.launch_gap_s == Approx(7e-6));
  CHECK(mi.multiprocessors == 304);
  CHECK(mi.tail_ctas_per_sm == 3);
  CHECK(mi.kernels[curve_index(KernelKind::AttentionForward, true)].at(8192) == Approx(0.5));
  // The backward was not measured: it keeps the fallback's curves, masked ones included.
  CHECK(mi.kernels[curve_index(KernelKind::AttentionBackward, true)].points ==
        c.compute_for("*").kernels[curve_index(KernelKind::AttentionBackward, true)].points);
  const Json bad = parse_json_text(R"({
    "schema": "burst.calibration/1",
    "compute": [{"gpu": "MI300", "launch_gap": "5ms", "multiprocessors": 2000}]})",
                                   "bad.json");
  try {
    (void)apply_calibration(default_calibration(), bad, "bad.json");
    FAIL("expected an error");
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find("/compute/0/multiprocessors") != std::string::npos);
    CHECK(what.find("/compute/0/launch_gap") != std::string::npos);
  }
}

TEST_CASE("calibration errors name every problem with its JSON pointer") {
  const Json doc = parse_json_text(R"({
    "schema": "burst.calibration/2",
    "compute": [{"gpu": "H100", "attn_fwd": [[512, 1.5], [256, 0.5]], "gem": [], "attention_path": ""}],
    "link_efficiency": {"nvlnk": 0.5},
    "latency": {"NET": "3xs"}})",
                                   "cal.json");
  try {
    (void)apply_calibration(default_calibration(), doc, "cal.json");
    FAIL("expected an error");
  } catch (const Error& e) {
    const auto w = wheres(e);
    auto has = [&](const std::string& where) { return std::find(w.begin(), w.end(), where) != w.end(); };
    CHECK(has("cal.json:/schema"));
    CHECK(has("cal.json:/compute/0/gem"));
    CHECK(has("cal.json:/compute/0/attention_path"));
    CHECK(has("cal.json:/compute/0/attn_fwd/0/1"));
    CHECK(has("cal.json:/compute/0/attn_fwd/1/0"));
    CHECK(has("cal.json:/link_efficiency/nvlnk"));
    CHECK(has("cal.json:/latency/NET"));
    CHECK(std::string(e.what()).find("did you mean 'nvlink'?") != std::string::npos);
  }
}

TEST_CASE("the default calibration round-trips through its JSON form and a file") {
  const Calibration d = default_calibration();
  const std::string path = "burst_engine_test_calibration.json";
  {
    std::ofstream out(path);
    out << calibration_to_json(d).dump(2);
  }
  const CostModels m = make_cost_models("roofline", "calibrated", path);
  std::remove(path.c_str());
  const Calibration back = apply_calibration(default_calibration(), calibration_to_json(d), "json");
  REQUIRE(back.compute.size() == d.compute.size());
  for (std::size_t i = 0; i < d.compute.size(); ++i) {
    for (std::size_t k = 0; k < kKernelCurves; ++k) {
      CHECK(back.compute[i].kernels[k].points == d.compute[i].kernels[k].points);
    }
    CHECK(back.compute[i].launch_gap_s == Approx(d.compute[i].launch_gap_s));
    CHECK(back.compute[i].multiprocessors == d.compute[i].multiprocessors);
  }
  CHECK(back.link_efficiency == d.link_efficiency);
  for (std::size_t k = 0; k < d.latency_s.size(); ++k) CHECK(back.latency_s[k] == Approx(d.latency_s[k]));
  CHECK(m.comm->name() == "calibrated");
}

TEST_CASE("a missing calibration file is an error naming the file") {
  CHECK_THROWS_WITH(make_cost_models("roofline", "calibrated", "no/such/calibration.json"),
                    Catch::Contains("no/such/calibration.json"));
}

TEST_CASE("the local CPU ranks have no GPU launch, thread-block or overlap model") {
  const Calibration calibration = default_calibration();
  const ComputeCalibration& cpu = calibration.compute_for("cpu-rank");
  CHECK(cpu.gpu == "cpu-rank");
  CHECK(cpu.multiprocessors == 0);
  CHECK(cpu.launch_gap_s == 0);
  CHECK(cpu.parallelism(5, true) == 1);
  const CostModels m = make_cost_models(calibration);
  CHECK(m.compute->overlap_slowdown(test::test_gpu("cpu-rank")) == 1);
  CHECK(m.compute->overlap_slowdown(test::test_gpu("A100-SXM4-80GB")) > 1);
}
