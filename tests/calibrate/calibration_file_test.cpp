// The file `burst calibrate --quick --per-node 1` wrote on 2 ranks (burst_calibrate_quick_np2):
// it must be a burst.calibration/1 document whose "local" section has every measured field,
// positive, that the local topology and the cost models both accept and use. With one rank per
// virtual node there is no intra pair, so intra_* must be absent (the defaults apply).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "common/json_reader.hpp"
#include "common/units.hpp"
#include "simulator/costs/calibration.hpp"
#include "tests/cli/run_cli.hpp"
#include "topologies/local_calibration.hpp"
#include "topologies/presets.hpp"

namespace {

using namespace burst;

// Points BURST_LOCAL_CALIBRATION at the measured file for the lifetime of the object.
struct UseCalibration {
  UseCalibration() { setenv("BURST_LOCAL_CALIBRATION", BURST_CALIBRATION_FILE, 1); }
  ~UseCalibration() { unsetenv("BURST_LOCAL_CALIBRATION"); }
};

}  // namespace

TEST_CASE("the calibration file has every measured local field, positive") {
  const Json doc = read_json_file(BURST_CALIBRATION_FILE);
  CHECK(doc["schema"] == "burst.calibration/1");
  const Json& local = doc["local"];
  CHECK(units::parse_flop_rate(local["compute_flops_per_rank"].get<std::string>(), "compute") > 0);
  CHECK(units::parse_bytes(local["memory_per_rank"].get<std::string>(), "memory") > 0);
  CHECK(units::parse_bandwidth(local["memory_bandwidth_per_rank"].get<std::string>(), "memory bw") > 0);
  CHECK(local["optimizer_params_per_s_per_rank"].get<double>() > 0);
  CHECK(units::parse_bandwidth(local["inter_bandwidth"].get<std::string>(), "inter bw") > 0);
  CHECK(units::parse_duration(local["inter_latency"].get<std::string>(), "inter latency") > 0);
  CHECK_FALSE(local.contains("intra_bandwidth"));
  CHECK_FALSE(local.contains("intra_latency"));
  const Json& compute = doc["compute"];
  REQUIRE(compute.size() == 1);
  CHECK(compute[0]["gpu"] == "cpu-rank");
  for (const char* kernel : {"attn_fwd", "attn_bwd", "attn_fwd_masked", "attn_bwd_masked", "gemm"}) {
    CHECK(compute[0][kernel].size() == 3);
  }
  // The decoder layer's elementwise kernels, one token count in --quick: a share of the memory
  // bandwidth, which the FLOP peak above does not include.
  const Json& elementwise = compute[0]["elementwise"];
  REQUIRE(elementwise.size() == 1);
  CHECK(elementwise[0][0] == 256);
  CHECK(elementwise[0][1].get<double>() > 0);
  CHECK(elementwise[0][1].get<double>() <= 1);
}

TEST_CASE("the local topology built from the file reports the measured speeds") {
  const topo::LocalCalibration c = topo::read_local_calibration(BURST_CALIBRATION_FILE);
  CHECK(c.source == BURST_CALIBRATION_FILE);
  const topo::LocalCalibration defaults;
  CHECK(c.intra_bandwidth_Bps == defaults.intra_bandwidth_Bps);
  UseCalibration use;
  // One rank per virtual node: the loopback NIC is that rank's alone; it hangs off the node's
  // shared memory at the intra bandwidth (here the default), which caps it.
  const topo::Topology t = topo::make_preset("local", 2, 1);
  CHECK(t.gpu().model == "cpu-rank");
  CHECK(t.gpu().peak_bf16_flops == c.compute_flops_per_rank);
  CHECK(t.gpu().memory_bytes == c.memory_per_rank);
  CHECK(c.optimizer_params_per_s_per_rank > 0);
  CHECK(t.gpu().optimizer_params_per_s == c.optimizer_params_per_s_per_rank);
  CHECK(t.inter_node_bandwidth_per_gpu() == std::min(c.inter_bandwidth_Bps, c.intra_bandwidth_Bps));
}

TEST_CASE("the default cost calibration adopts the file's cpu-rank curves, and only those") {
  const sim::Calibration without = sim::default_calibration();
  UseCalibration use;
  const sim::Calibration with = sim::default_calibration();
  const Json doc = read_json_file(BURST_CALIBRATION_FILE);
  const Json& fwd = doc["compute"][0]["attn_fwd"];
  const sim::EfficiencyCurve& curve = with.compute_for("cpu-rank").kernels[0];
  REQUIRE(curve.points.size() == fwd.size());
  for (std::size_t i = 0; i < fwd.size(); ++i) {
    CHECK(curve.points[i].first == fwd[i][0].get<double>());
    CHECK(curve.points[i].second == fwd[i][1].get<double>());
  }
  // The causal measurements are the masked blocks' curve.
  const Json& masked = doc["compute"][0]["attn_fwd_masked"];
  const sim::EfficiencyCurve& masked_curve =
      with.compute_for("cpu-rank").kernels[sim::curve_index(sim::KernelKind::AttentionForward, true)];
  REQUIRE(masked_curve.points.size() == masked.size());
  CHECK(masked_curve.points.back().second == masked.back()[1].get<double>());
  // The layer's elementwise figure prices the elementwise tasks.
  const sim::EfficiencyCurve& elementwise =
      with.compute_for("cpu-rank").kernels[sim::curve_index(sim::KernelKind::Elementwise, false)];
  REQUIRE(elementwise.points.size() == 1);
  CHECK(elementwise.points[0].second == doc["compute"][0]["elementwise"][0][1].get<double>());
  CHECK(with.compute_for("H100-SXM5-80GB").kernels[0].points == without.compute_for("H100").kernels[0].points);
  CHECK(with.compute_for("A800-SXM4-80GB").kernels[0].points == without.compute_for("*").kernels[0].points);
}

TEST_CASE("burst calibrate: golden errors") {
  SECTION("-o into a missing directory names the path") {
    const auto r = test::run_cli("calibrate --quick -o /nonexistent-burst-dir/local.json");
    CHECK(r.exit_code == 2);
    CHECK(r.err ==
          "error: /nonexistent-burst-dir/local.json: cannot write the calibration: directory "
          "'/nonexistent-burst-dir' does not exist (hint: create it first)\n");
  }
  SECTION("--per-node must divide the rank count") {
    const auto r = test::run_cli("calibrate --quick --per-node 2 -o local.json");
    CHECK(r.exit_code == 2);
    CHECK(r.err ==
          "error: --per-node: 2 ranks per virtual node do not divide the job's 1 ranks (valid: a divisor of "
          "the rank count (mpirun -np); hint: use the --per-node the runs will use with --topology local "
          "--nodes N --per-node K, and -np N*K)\n");
  }
}
