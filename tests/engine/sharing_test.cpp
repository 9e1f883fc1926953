// The engines on cases small enough to compute by hand. Models: compute "peak" (seconds =
// flops / 100 TFLOPS) and comm "ideal" (raw capacity; latency = sum of link latencies), so
// every expected time below is a formula in the test's own numbers.
#include <catch2/catch.hpp>

#include "simulator/engine/engine.hpp"
#include "simulator/costs/calibration.hpp"
#include "simulator/detail/engine/flow_network.hpp"
#include "test_topologies.hpp"

using namespace burst;
using namespace burst::sim;

namespace {

const CostModels kPeakModels = make_cost_models("peak", "ideal");
constexpr double C = 100e9;  // link capacity
constexpr double L = 1e-6;   // per link; a star path crosses 2 links
constexpr double X = 1e9;    // bytes
constexpr double kPeak = 100e12;

SimResult run(const std::string& engine, const TaskGraph& g, const topo::Topology& t, bool record = false) {
  return make_engine(engine)->run(g, t, kPeakModels, EngineOptions{record, false});
}

TaskGraph::TransferSpec send(int src, int dst, double bytes = X) {
  return {
      .src = src, .dst = dst, .channel = 0, .phase = Phase::Forward, .payload = Payload::KV, .bytes = bytes, .step = 0};
}
TaskGraph::ComputeSpec work(int gpu, double seconds, int stream = 0) {
  return {.gpu = gpu,
          .stream = stream,
          .phase = Phase::Forward,
          .kernel = KernelKind::Gemm,
          .flops = seconds * kPeak,
          .block_q = 0,
          .block_k = 0,
          .step = 0};
}

}  // namespace

TEST_CASE("two flows on one Shared link each get half: both end at latency + 2 x bytes / capacity") {
  const topo::Topology t = test::star(2, C, L);
  TaskGraph g(2);
  g.add_transfer(send(0, 1), {});
  g.add_transfer(send(0, 1), {});
  const SimResult r = run("event", g, t);
  CHECK(r.times[0].end == Approx(2 * L + 2 * X / C));
  CHECK(r.times[1].end == Approx(2 * L + 2 * X / C));
  CHECK(r.makespan_s == Approx(2 * L + 2 * X / C));
  // The analytic engine ignores the sharing: latency + bytes / capacity.
  CHECK(run("analytic", g, t).times[1].end == Approx(2 * L + X / C));
}

TEST_CASE("a FatPipe link does not slow concurrent flows: latency + bytes / capacity") {
  const topo::Topology t = test::star(2, C, L, topo::Sharing::FatPipe);
  TaskGraph g(2);
  g.add_transfer(send(0, 1), {});
  g.add_transfer(send(0, 1), {});
  const SimResult r = run("event", g, t);
  CHECK(r.times[0].end == Approx(2 * L + X / C));
  CHECK(r.times[1].end == Approx(2 * L + X / C));
}

TEST_CASE("opposite directions of a link do not share") {
  const topo::Topology t = test::star(2, C, L);
  TaskGraph g(2);
  g.add_transfer(send(0, 1), {});
  g.add_transfer(send(1, 0), {});
  const SimResult r = run("event", g, t);
  CHECK(r.times[0].end == Approx(2 * L + X / C));
  CHECK(r.times[1].end == Approx(2 * L + X / C));
}

TEST_CASE("a flow joining later: the first slows down, bytes left are carried over") {
  // A starts flowing at L' = 2L at rate C; B joins at d + L' when A has X - C d left; both at
  // C/2 until A ends at L' + 2X/C - d; B then has C d left at rate C: it ends at L' + 2X/C.
  const double d = 0.004;
  const topo::Topology t = test::star(2, C, L);
  TaskGraph g(2);
  g.add_transfer(send(0, 1), {});
  const TaskId wait = g.add_compute(work(0, d), {});
  g.add_transfer(send(0, 1), {wait});
  const SimResult r = run("event", g, t);
  CHECK(r.times[0].end == Approx(2 * L + 2 * X / C - d));
  CHECK(r.times[2].start == Approx(d));
  CHECK(r.times[2].end == Approx(2 * L + 2 * X / C));
}

TEST_CASE("max-min: three flows split a link in thirds, a fourth takes the rest of its own") {
  // A 0->1, B 0->2, D 0->3 share gpu0->nvswitch: C/3 each. E 2->3 shares nvswitch->gpu3 with
  // D only: it gets C - C/3 = 2C/3. E ends at L' + X / (2C/3) = L' + 1.5 X/C; A, B, D stay at
  // C/3 (gpu0's link is their bottleneck) and end at L' + 3 X/C.
  const topo::Topology t = test::star(4, C, L);
  TaskGraph g(4);
  g.add_transfer(send(0, 1), {});
  g.add_transfer(send(0, 2), {});
  g.add_transfer(send(0, 3), {});
  g.add_transfer(send(2, 3), {});
  const SimResult r = run("event", g, t, true);
  for (int i = 0; i < 3; ++i) CHECK(r.times[static_cast<std::size_t>(i)].end == Approx(2 * L + 3 * X / C));
  CHECK(r.times[3].end == Approx(2 * L + 1.5 * X / C));

  SECTION("the rates themselves, from the flow network") {
    const Routes routes(g, t, *kPeakModels.comm);
    FlowNetwork net(routes, false);
    for (TaskId id = 0; id < 4; ++id) net.add(id, routes.index_of(id), X, 0.0);
    std::vector<LinkSample> samples;
    net.reshare(0.0, samples);
    CHECK(net.rate_of(0) == Approx(C / 3));
    CHECK(net.rate_of(1) == Approx(C / 3));
    CHECK(net.rate_of(2) == Approx(C / 3));
    CHECK(net.rate_of(3) == Approx(2 * C / 3));
    // E finishes first, at X / (2C/3); the others then keep C/3 (gpu0's uplink binds them).
    CHECK(net.next_finish() == Approx(1.5 * X / C));
    CHECK(net.pop_finished(net.next_finish()) == 3);
    net.reshare(1.5 * X / C, samples);
    CHECK(net.rate_of(2) == Approx(C / 3));
    CHECK(net.next_finish() == Approx(3 * X / C));
  }
  SECTION("link samples: gpu0's uplink runs full while the three flows last, then drops to 0") {
    std::vector<LinkSample> up;
    for (const LinkSample& s : r.link_samples) {
      if (t.link_name(s.link) == "n0:gpu0->nvswitch") up.push_back(s);
    }
    REQUIRE(up.size() == 2);
    CHECK(up[0].time == Approx(2 * L));
    CHECK(up[0].bytes_per_second == Approx(C));
    CHECK(up[1].bytes_per_second == 0);
  }
}

TEST_CASE("a flow capped by a FatPipe link leaves the Shared capacity to the others") {
  // gpu0's link: Shared 25 GB/s; gpu1's: FatPipe 10 GB/s; gpu2's: FatPipe 100 GB/s. A = 1->0 and
  // B = 2->0 share nvswitch->gpu0: fair share 12.5, but A is capped at 10, so B gets 25 - 10 = 15.
  // B ends at L' + X / 15 GB/s (before A), then A stays at its cap: L' + X / 10 GB/s.
  using topo::Sharing;
  const topo::Topology t =
      test::star_mixed({{25e9, Sharing::Shared}, {10e9, Sharing::FatPipe}, {100e9, Sharing::FatPipe}}, L);
  TaskGraph g(3);
  g.add_transfer(send(1, 0), {});
  g.add_transfer(send(2, 0), {});
  const SimResult r = run("event", g, t);
  CHECK(r.times[0].end == Approx(2 * L + X / 10e9));
  CHECK(r.times[1].end == Approx(2 * L + X / 15e9));
}

TEST_CASE("flows from two GPUs share their node's NIC") {
  // cluster(): both GPUs of node 0 reach the single NIC (25 GB/s) over PCIe (50 GB/s); sends
  // 0 -> 2 and 1 -> 3 share the NIC's uplink at 12.5 GB/s each.
  const topo::Topology t = test::cluster(2, 2, 10e9, 50e9, 25e9, topo::Sharing::FatPipe);
  TaskGraph g(4);
  g.add_transfer(send(0, 2), {});
  g.add_transfer(send(1, 3), {});
  const SimResult r = run("event", g, t);
  const double lat = t.path(0, 2).latency_s;
  CHECK(r.times[0].end == Approx(lat + X / 12.5e9));
  CHECK(r.times[1].end == Approx(lat + X / 12.5e9));
}

TEST_CASE("a compute stream runs one task at a time, in id order") {
  // Tasks 1, 2 on stream 0 (10 ms each), task 3 on stream 1 in parallel. Task 4 on stream 0
  // waits for a transfer ending at 2L + X/C = 10.002 ms; task 5, ready at 0 but after task 4
  // on the stream, waits for it (CUDA stream order), as both engines agree.
  const topo::Topology t = test::star(2, C, L);
  TaskGraph g(2);
  const TaskId x = g.add_transfer(send(1, 0), {});
  g.add_compute(work(0, 0.01), {});
  g.add_compute(work(0, 0.01), {});
  g.add_compute(work(0, 0.01, 1), {});
  g.add_compute(work(0, 0.001), {x});
  g.add_compute(work(0, 0.001), {});
  for (const std::string engine : {"event", "analytic"}) {
    const SimResult r = run(engine, g, t);
    CHECK(r.times[1].end == Approx(0.01));
    CHECK(r.times[2].start == Approx(0.01));
    CHECK(r.times[2].end == Approx(0.02));
    CHECK(r.times[3].start == 0);
    CHECK(r.times[3].end == Approx(0.01));
    CHECK(r.times[4].start == Approx(0.02));  // max(transfer end 10.002 ms, stream free 20 ms)
    CHECK(r.times[5].start == Approx(0.021));
    CHECK(r.compute_busy_s[0] == Approx(0.032));
    CHECK(r.compute_busy_s[1] == 0);
  }
}

TEST_CASE("dependencies chain compute and transfers") {
  // compute 5 ms on gpu0 -> send to gpu1 (2L + X/C) -> compute 5 ms on gpu1.
  const topo::Topology t = test::star(2, C, L);
  TaskGraph g(2);
  const TaskId a = g.add_compute(work(0, 0.005), {});
  const TaskId b = g.add_transfer(send(0, 1), {a});
  g.add_compute(work(1, 0.005), {b, -1});
  for (const std::string engine : {"event", "analytic"}) {
    const SimResult r = run(engine, g, t);
    CHECK(r.times[1].start == Approx(0.005));
    CHECK(r.times[1].end == Approx(0.005 + 2 * L + X / C));
    CHECK(r.makespan_s == Approx(0.01 + 2 * L + X / C));
  }
}

TEST_CASE("empty transfers pay the latency; a transfer to oneself is free") {
  const topo::Topology t = test::star(2, C, L);
  TaskGraph g(2);
  g.add_transfer(send(0, 1, 0), {});
  g.add_transfer(send(1, 1), {});
  for (const std::string engine : {"event", "analytic"}) {
    const SimResult r = run(engine, g, t);
    CHECK(r.times[0].end == Approx(2 * L));
    CHECK(r.times[1].end == 0);
  }
}

TEST_CASE("engine names and errors") {
  CHECK(engine_names() == std::vector<std::string>{"event", "analytic"});
  CHECK(make_engine("event")->name() == "event");
  CHECK(make_engine("analytic")->name() == "analytic");
  CHECK_THROWS_WITH(make_engine("evnt"), Catch::Contains("did you mean 'event'?"));
}

TEST_CASE("a graph naming GPUs the topology lacks is rejected") {
  const topo::Topology t = test::star(2, C, L);
  TaskGraph big(4);
  big.add_compute(work(3, 0.001), {});
  CHECK_THROWS_AS(run("event", big, t), std::invalid_argument);
  TaskGraph bad(2);
  bad.add_transfer(send(0, 2), {});
  CHECK_THROWS_AS(run("analytic", bad, t), std::invalid_argument);
}

TEST_CASE("both engines record link usage over time") {
  // One transfer 0 -> 1 alone: its two links run at C from 2L to 2L + X/C, then drop to 0.
  const topo::Topology t = test::star(2, C, L);
  TaskGraph g(2);
  g.add_transfer(send(0, 1), {});
  for (const std::string engine : {"event", "analytic"}) {
    INFO(engine);
    const SimResult r = run(engine, g, t, true);
    REQUIRE(r.link_samples.size() == 4);
    for (const LinkSample& s : r.link_samples) {
      CHECK((t.link_name(s.link) == "n0:gpu0->nvswitch" || t.link_name(s.link) == "n0:nvswitch->gpu1"));
      if (s.bytes_per_second > 0) {
        CHECK(s.time == Approx(2 * L));
        CHECK(s.bytes_per_second == Approx(C));
      } else {
        CHECK(s.time == Approx(2 * L + X / C));
      }
    }
    CHECK(run(engine, g, t, false).link_samples.empty());
  }
}

TEST_CASE("overlap is not free: compute that starts while its GPU's transfer is in flight runs slower") {
  // The roofline model on an A100 (108 multiprocessors, 4 held by communication kernels):
  // overlapped compute takes 108 / 104 times as long; compute on a GPU without transfers does not.
  const CostModels roofline = make_cost_models("roofline", "ideal");
  topo::Topology t = test::star(3, C, L);
  const Calibration calibration = default_calibration();
  const ComputeCalibration& a100 = calibration.compute_for("A100");
  REQUIRE(a100.comm_ctas == 4);
  const topo::GpuSpec gpu = t.gpu();
  const double slowdown = roofline.compute->overlap_slowdown(gpu);
  CHECK(slowdown == Approx(static_cast<double>(a100.multiprocessors) / (a100.multiprocessors - 4)));
  TaskGraph g(3);
  g.add_transfer(send(0, 1), {});  // GPUs 0 and 1 communicate until 2L + X / C
  const TaskId overlapped = g.add_compute(work(0, 1e-3), {});
  const TaskId receiving = g.add_compute(work(1, 1e-3), {});
  const TaskId alone = g.add_compute(work(2, 1e-3), {});
  const SimResult r = make_engine("event")->run(g, t, roofline, EngineOptions{true, false});
  const double base = r.times[static_cast<std::size_t>(alone)].end;
  CHECK(r.times[static_cast<std::size_t>(overlapped)].end == Approx(base * slowdown));
  CHECK(r.times[static_cast<std::size_t>(receiving)].end == Approx(base * slowdown));
  // A compute that starts once the transfer is done runs at full speed.
  TaskGraph later(2);
  const TaskId hop = later.add_transfer(send(0, 1), {});
  const TaskId after = later.add_compute(work(1, 1e-3), {hop});
  const SimResult r2 = make_engine("event")->run(later, test::star(2, C, L), roofline, EngineOptions{true, false});
  CHECK(r2.times[static_cast<std::size_t>(after)].end - r2.times[static_cast<std::size_t>(after)].start ==
        Approx(base));
}
