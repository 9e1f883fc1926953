// The ring micro benchmark: the graph has the documented shape and both engines agree on it
// (sends are serialised per GPU and each goes to the next GPU, so no link is contended), with
// the steady state bounded by max(compute, transfer) per step. The "[.bench]" case measures
// the event engine on 1024 GPUs x 1024 steps (2M tasks) and prints tasks per second.
#include <iostream>

#include <catch2/catch.hpp>

#include "simulator/detail/engine/engine_bench.hpp"
#include "test_topologies.hpp"

using namespace burst;
using namespace burst::sim;

TEST_CASE("ring graph: 2 x gpus x steps tasks, engines agree, makespan follows the slower side") {
  const topo::Topology t = test::cluster(4, 4, 200e9, 25e9, 25e9);
  const RingGraphSpec spec{.steps = 16, .flops = 2e12, .bytes = 1e8, .block = 8192};
  const TaskGraph g = make_ring_graph(16, spec);
  CHECK(g.size() == 2u * 16 * 16);
  const CostModels models = make_cost_models("peak", "ideal");
  const auto a = bench_ring(t, "analytic", models, spec);
  const auto e = bench_ring(t, "event", models, spec);
  CHECK(a.tasks == 512);
  CHECK(e.makespan_s == Approx(a.makespan_s).epsilon(1e-9));
  // Each step: compute 2e12 / 1e14 = 20 ms; the slowest send crosses the 25 GB/s NIC: 4 ms +
  // latency. Compute dominates: makespan ~ steps x 20 ms (+ one transfer before the last step).
  CHECK(a.makespan_s >= 16 * 0.02);
  CHECK(a.makespan_s <= 16 * 0.02 + 0.005);
}

TEST_CASE("event engine speed on a 1024-GPU ring, 2M tasks", "[.bench]") {
  const topo::Topology t = test::cluster(128, 8, 200e9, 25e9, 25e9);
  const CostModels models = make_cost_models();
  const RingGraphSpec spec{.steps = 1024, .flops = 1e12, .bytes = 1e8, .block = 32768};
  for (const std::string engine : {"analytic", "event"}) {
    const auto r = bench_ring(t, engine, models, spec);
    std::cout << engine << ": " << r.tasks << " tasks, build " << r.build_s << " s, run " << r.run_s << " s, "
              << r.tasks_per_s / 1e6 << " M tasks/s, makespan " << r.makespan_s << " s\n";
  }
}
