// The measured trace's layout: compute spans on "gpu L stream 0", and where the kernels' device
// time was measured (CUDA events) a "gpu L kernels (CUDA events)" thread whose slice ends with
// the host span and lasts the device time; ranks whose kernels were not measured (the CPU) get
// no such thread.
#include <catch2/catch.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

#include "runtime/executor/run_trace.hpp"

using namespace burst::rt;

TEST_CASE("kernel times measured by CUDA events get their own thread, ending with the host span") {
  RunTrace trace;
  trace.ranks.resize(2);
  trace.ranks[0].events = {
      TraceEvent{TraceKind::Compute, TracePhase::Forward, 0, 1, -1, Channel::Collective, 0.010, 0.014, 0.003},
      TraceEvent{TraceKind::Compute, TracePhase::Backward, 1, 0, -1, Channel::Collective, 0.020, 0.030, 0.008}};
  trace.ranks[1].local = 1;
  trace.ranks[1].events = {
      TraceEvent{TraceKind::Compute, TracePhase::Forward, 0, 0, -1, Channel::Collective, 0.010, 0.012}};
  std::ostringstream out;
  write_run_trace(out, trace);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  int device_threads = 0, device_slices = 0, host_slices = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "gpu 0 kernels (CUDA events)")
      ++device_threads;
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "gpu 1 kernels (CUDA events)")
      ++device_threads;
    if (e["ph"] != "X") continue;
    if (e["tid"] == 2) {
      ++device_slices;
      CHECK(e["pid"] == 0);
      const double end_us = e["ts"].get<double>() + e["dur"].get<double>();
      if (e["name"] == "attn_fwd step 0") {
        CHECK(e["dur"].get<double>() == Approx(3000));
        CHECK(end_us == Approx(14000));
        CHECK(e["args"]["host_span_ms"].get<double>() == Approx(4));
      } else {
        CHECK(e["name"] == "attn_bwd step 1");
        CHECK(e["dur"].get<double>() == Approx(8000));
        CHECK(end_us == Approx(30000));
      }
    } else {
      ++host_slices;
    }
  }
  CHECK(device_threads == 1);  // rank 1 measured nothing on a device
  CHECK(device_slices == 2);
  CHECK(host_slices == 3);
}
