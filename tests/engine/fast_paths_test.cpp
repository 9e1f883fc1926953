// The pieces that make the engines fast, against plain references: the finish-time queue of
// the flow network against an ordered set, runs without per-task times against runs with
// them, the huge-page vectors against std::vector, and the task graph's compact storage.
#include <algorithm>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "simulator/engine/engine.hpp"
#include "simulator/detail/engine/finish_queue.hpp"
#include "simulator/huge_page_allocator.hpp"
#include "test_topologies.hpp"

using namespace burst;
using namespace burst::sim;

TEST_CASE("finish queue: pops in (finish time, task) order like an ordered set, through moves and erases") {
  std::mt19937 rng(7);
  // Few distinct times, so groups hold many flows and flows move between them.
  std::uniform_int_distribution<int> op(0, 9), slot_of(0, 199), time_of(0, 12);
  FinishQueue queue;
  std::set<std::tuple<double, TaskId, std::int32_t>> reference;
  std::vector<double> finish_of(200, -1);  // per slot, -1: not queued
  std::vector<TaskId> task_of(200);
  for (std::int32_t s = 0; s < 200; ++s) task_of[static_cast<std::size_t>(s)] = 1000 - 3 * s;
  double now = 0;
  for (int i = 0; i < 20000; ++i) {
    const int o = op(rng);
    const std::int32_t s = slot_of(rng);
    const auto si = static_cast<std::size_t>(s);
    if (o < 6) {  // set or move, never into the past
      const double t = now + time_of(rng);
      if (finish_of[si] >= 0) reference.erase({finish_of[si], task_of[si], s});
      finish_of[si] = t;
      reference.insert({t, task_of[si], s});
      queue.set(s, task_of[si], t);
    } else if (o < 8) {
      if (finish_of[si] >= 0) reference.erase({finish_of[si], task_of[si], s});
      finish_of[si] = -1;
      queue.erase(s);
    } else {  // advance to the earliest time and pop a few there
      REQUIRE(queue.min_finish() ==
              (reference.empty() ? std::numeric_limits<double>::infinity() : std::get<0>(*reference.begin())));
      if (reference.empty()) continue;
      now = std::get<0>(*reference.begin());
      for (int k = 0; k < 5 && !reference.empty() && std::get<0>(*reference.begin()) <= now; ++k) {
        const auto [t, task, expected] = *reference.begin();
        reference.erase(reference.begin());
        finish_of[static_cast<std::size_t>(expected)] = -1;
        REQUIRE(queue.pop(now) == expected);
      }
      if (reference.empty() || std::get<0>(*reference.begin()) > now) CHECK(queue.pop(now) == -1);
    }
  }
}

TEST_CASE("without record_times the engines give the same makespan, busy times, link bytes and samples") {
  const topo::Topology t = test::star(4, 100e9, 1e-6);
  const CostModels models = make_cost_models("roofline", "calibrated");
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> gpu(0, 3), stream(0, 1);
  std::uniform_real_distribution<double> amount(1e8, 1e9);
  TaskGraph g(4);
  for (int i = 0; i < 400; ++i) {
    const TaskId dep = i > 0 ? std::uniform_int_distribution<TaskId>(0, i - 1)(rng) : -1;
    const int src = gpu(rng);
    if (i % 3 == 0) {
      g.add_compute({.gpu = src,
                     .stream = stream(rng),
                     .phase = Phase::Forward,
                     .kernel = KernelKind::AttentionForward,
                     .flops = amount(rng) * 1e3,
                     .block_q = 4096,
                     .block_k = 4096,
                     .step = i},
                    {dep});
    } else {  // transfers to random peers: flows overlap and share links
      g.add_transfer({.src = src,
                      .dst = (src + 1 + gpu(rng) % 3) % 4,
                      .channel = 0,
                      .phase = Phase::Forward,
                      .payload = Payload::KV,
                      .bytes = amount(rng),
                      .step = i},
                     {dep});
    }
  }
  for (const std::string engine : {"event", "analytic"}) {
    for (const bool links : {false, true}) {
      INFO(engine << " record_links " << links);
      const auto e = make_engine(engine);
      const SimResult with = e->run(g, t, models, {.record_links = links, .progress = false, .record_times = true});
      const SimResult without = e->run(g, t, models, {.record_links = links, .progress = false, .record_times = false});
      CHECK(with.times.size() == g.size());
      CHECK(without.times.empty());
      CHECK(without.makespan_s == with.makespan_s);
      CHECK(without.compute_busy_s == with.compute_busy_s);
      CHECK(without.link_bytes == with.link_bytes);
      REQUIRE(without.link_samples.size() == with.link_samples.size());
      for (std::size_t i = 0; i < with.link_samples.size(); ++i) {
        CHECK(without.link_samples[i].link == with.link_samples[i].link);
        CHECK(without.link_samples[i].time == with.link_samples[i].time);
        CHECK(without.link_samples[i].bytes_per_second == with.link_samples[i].bytes_per_second);
      }
    }
  }
}

TEST_CASE("huge-page vectors hold what std::vector holds, below and above the huge-page size") {
  for (const std::size_t n : {std::size_t{10}, std::size_t{3} << 20}) {  // 40 bytes; 12 MiB
    BigVector<std::int32_t> big;
    std::vector<std::int32_t> plain;
    for (std::size_t i = 0; i < n; ++i) {
      big.push_back(static_cast<std::int32_t>(i * 7));
      plain.push_back(static_cast<std::int32_t>(i * 7));
    }
    BigVector<std::int32_t> copy = big;
    copy.assign(n / 2, 5);
    CHECK(std::equal(big.begin(), big.end(), plain.begin(), plain.end()));
    CHECK(copy.size() == n / 2);
    CHECK((n / 2 == 0 || (copy.front() == 5 && copy.back() == 5)));
  }
}

TEST_CASE("task graph: dependency ranges end where the next task's begin; block sizes must fit 32 bits") {
  TaskGraph g(2);
  const TaskId a = g.add_compute({.gpu = 0,
                                  .stream = 2,
                                  .phase = Phase::Forward,
                                  .kernel = KernelKind::Gemm,
                                  .flops = 1,
                                  .block_q = 1,
                                  .block_k = 2,
                                  .step = 0},
                                 {});
  const TaskId b = g.add_transfer(
      {.src = 0, .dst = 1, .channel = 0, .phase = Phase::Forward, .payload = Payload::KV, .bytes = 1, .step = 0},
      {a, -1, a});
  const TaskId c = g.add_compute({.gpu = 1,
                                  .stream = 0,
                                  .phase = Phase::Forward,
                                  .kernel = KernelKind::Gemm,
                                  .flops = 1,
                                  .block_q = 0,
                                  .block_k = 0,
                                  .step = 1},
                                 {b, a});
  CHECK(g.deps(a).empty());
  CHECK(std::vector<TaskId>(g.deps(b).begin(), g.deps(b).end()) == std::vector<TaskId>{a, a});
  CHECK(std::vector<TaskId>(g.deps(c).begin(), g.deps(c).end()) == std::vector<TaskId>{b, a});
  CHECK(g.dependencies().size() == 4);
  CHECK(g.streams() == 3);
  CHECK(g.task(a).block_k == 2);
  CHECK_THROWS_AS(g.add_compute({.gpu = 0,
                                 .stream = 0,
                                 .phase = Phase::Forward,
                                 .kernel = KernelKind::Gemm,
                                 .flops = 1,
                                 .block_q = std::int64_t{1} << 31,
                                 .block_k = 1,
                                 .step = 0},
                                {}),
                  std::invalid_argument);
  // A dependency on a task not yet added throws and leaves the graph as it was.
  CHECK_THROWS_AS(
      g.add_transfer(
          {.src = 0, .dst = 1, .channel = 0, .phase = Phase::Forward, .payload = Payload::KV, .bytes = 1, .step = 0},
          {a, 7}),
      std::logic_error);
  CHECK(g.size() == 3);
  CHECK(g.dependencies().size() == 4);
  CHECK(std::vector<TaskId>(g.deps(c).begin(), g.deps(c).end()) == std::vector<TaskId>{b, a});
}
