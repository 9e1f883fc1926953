// Re-derives the fitted defaults of the calibrated comm model from copies of the measurement
// files (tests/data/measurements, see its README), so that a change of the fit or of the
// defaults cannot go unnoticed. docs/cost-models.md quotes the numbers `[.fit-report]` prints.
#include <iostream>

#include <catch2/catch.hpp>

#include "common/json_reader.hpp"

#include "simulator/costs/calibration.hpp"
#include "simulator/detail/costs/nccl_fit.hpp"

using namespace burst::sim;

namespace {

std::string read(const std::string& name) {
  return burst::read_untrusted_file(std::string(BURST_TEST_DATA) + "/measurements/" + name, burst::kJsonDocumentCap);
}

constexpr double kMiB = 1 << 20;

// NVLink: li-plus sendrecv over 8 A100s, one hop per message; rows >= 256 MiB (the 128 MiB
// row is still ramping up). Efficiency = fitted bandwidth / 300 GB/s per direction.
LatencyBandwidth nvlink_fit() {
  const auto tables = parse_nccl_tests(read("li-plus-playground_cuda_nccl.md_A100x8_sendrecv_perf.md"));
  REQUIRE(tables.size() == 1);
  REQUIRE(tables[0].size() == 4);
  return fit_point_to_point(tables[0], 256 * kMiB);
}

// Network: nccl-tests issue 309, table 7: 2 nodes x 8 H100, NCCL_ALGO=Ring, 8 x 400 Gb/s
// NICs per node. Ring all-reduce over 16 ranks, rows >= 64 MiB; with 8 channels each rank's
// bus bandwidth crosses 8 NICs, so per NIC it is busbw / 8, against 50 GB/s.
LatencyBandwidth network_fit() {
  const auto tables = parse_nccl_tests(read("nccl-tests-issue309_H100_8x400G-IB_multinode_all_reduce.txt"));
  REQUIRE(tables.size() == 7);
  REQUIRE(tables[0].size() == 32);
  return fit_ring_allreduce(tables[6], 16, 64 * kMiB);
}

// NVL latency: Azure ND A100 v4, 8-GPU all-reduce, rows <= 64 KiB (pure latency): median
// time over 2(n-1) = 14 ring steps.
double nvl_latency() {
  const NcclTable t = parse_busbw_markdown(read("azure-AI-benchmarking-guide_ND_A100_v4_results.md"), 8);
  REQUIRE(t.size() == 24);
  CHECK(t.front().bytes == 1024);
  CHECK(t[6].bytes == 65536);  // written "65K"
  CHECK(t.back().bytes == 8.0 * (1 << 30));
  return small_message_step_latency(t, 8, 64 * 1024);
}

}  // namespace

TEST_CASE("least squares recovers t = a + s / b exactly from exact samples") {
  const std::vector<double> s = {1e6, 2e6, 8e6}, t = {5e-6 + 1e6 / 2e10, 5e-6 + 2e6 / 2e10, 5e-6 + 8e6 / 2e10};
  const LatencyBandwidth f = fit_latency_bandwidth(s, t);
  CHECK(f.latency_s == Approx(5e-6));
  CHECK(f.bandwidth_Bps == Approx(2e10));
  const std::vector<double> one = {1e6};
  CHECK_THROWS(fit_latency_bandwidth(one, one));
}

TEST_CASE("the NVLink efficiency default is the sendrecv fit over 300 GB/s") {
  const LatencyBandwidth f = nvlink_fit();
  CHECK(f.bandwidth_Bps == Approx(197.4e9).epsilon(0.002));
  const auto& d = default_calibration();
  CHECK(d.link_efficiency[static_cast<int>(burst::topo::LinkKind::NvLink)] ==
        Approx(f.bandwidth_Bps / 300e9).margin(0.001));
}

TEST_CASE("the network efficiency and NET latency defaults are the ring all-reduce fit") {
  const LatencyBandwidth f = network_fit();
  const auto& d = default_calibration();
  CHECK(d.link_efficiency[static_cast<int>(burst::topo::LinkKind::Network)] ==
        Approx(f.bandwidth_Bps / 8 / 50e9).margin(0.001));
  CHECK(d.latency_s[static_cast<int>(burst::topo::PathClass::NET)] == Approx(f.latency_s).margin(0.05e-6));
}

TEST_CASE("the NVL latency default is the small all-reduce time per ring step") {
  const auto& d = default_calibration();
  CHECK(d.latency_s[static_cast<int>(burst::topo::PathClass::NVL)] == Approx(nvl_latency()).margin(0.05e-6));
}

TEST_CASE("the parsers read every row of every table") {
  const auto tables = parse_nccl_tests(read("nccl-tests-issue309_H100_8x400G-IB_multinode_all_reduce.txt"));
  std::size_t rows = 0;
  for (const auto& t : tables) rows += t.size();
  CHECK(rows == 134);
  // Row check: algbw = size / time, busbw = algbw x 2(n-1)/n; last row of table 7 (n = 16).
  const NcclRow& last = tables[6].back();
  CHECK(last.bytes == 8589934592.0);
  CHECK(last.busbw_Bps == Approx(last.bytes / last.time_s * 2 * 15 / 16).epsilon(0.001));
  const NcclTable h100 = parse_busbw_markdown(read("azure-AI-benchmarking-guide_ND_H100_v5_results.md"), 8);
  CHECK(h100.size() == 24);
}

TEST_CASE("print the fitted numbers for docs/cost-models.md", "[.fit-report]") {
  const LatencyBandwidth nv = nvlink_fit(), net = network_fit();
  std::cout << "NVLink sendrecv fit: " << nv.bandwidth_Bps / 1e9 << " GB/s (efficiency " << nv.bandwidth_Bps / 300e9
            << "), intercept " << nv.latency_s * 1e6 << " us\n"
            << "IB ring all-reduce fit: busbw " << net.bandwidth_Bps / 1e9 << " GB/s, per NIC "
            << net.bandwidth_Bps / 8 / 1e9 << " GB/s (efficiency " << net.bandwidth_Bps / 8 / 50e9
            << "), per-step latency " << net.latency_s * 1e6 << " us\n"
            << "NVL small all-reduce: per-step latency " << nvl_latency() * 1e6 << " us\n";
}
