// The Chrome trace is valid JSON with the events Perfetto needs: process and thread names,
// one "X" event per task with numeric ts/dur, and "C" counter events per link sample.
#include <map>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "simulator/engine/chrome_trace.hpp"
#include "simulator/detail/engine/engine_bench.hpp"
#include "test_topologies.hpp"

using namespace burst;
using namespace burst::sim;

namespace {

std::size_t count(const nlohmann::json& events, const std::string& ph, const std::string& name = "") {
  std::size_t n = 0;
  for (const auto& e : events) n += e["ph"] == ph && (name.empty() || e["name"] == name);
  return n;
}

}  // namespace

TEST_CASE("the trace has a process per node, a thread per stream and send queue, an event per task") {
  const topo::Topology t = test::cluster(2, 2, 200e9, 25e9, 25e9);
  const TaskGraph g = make_ring_graph(4, {.steps = 3, .flops = 1e12, .bytes = 1e8, .block = 4096});
  const CostModels models = make_cost_models();
  const SimResult r = make_engine("event")->run(g, t, models, {.record_links = true, .progress = false});
  REQUIRE(!r.link_samples.empty());

  std::ostringstream out;
  write_chrome_trace(out, g, r, t);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  CHECK(doc["displayTimeUnit"] == "ns");
  const auto& events = doc["traceEvents"];
  CHECK(count(events, "M", "process_name") == 3);  // node 0, node 1, links
  CHECK(count(events, "M", "thread_name") == 8);   // 4 GPUs x (stream 0 + send)
  CHECK(count(events, "X") == g.size());
  CHECK(count(events, "C") == r.link_samples.size());
  // The size estimate a command warns with counts the same events, and its bytes per event
  // are the right order for this small trace too (names are short here, metadata relatively big).
  CHECK(trace_event_count({{"run", &g, &r}}) == g.size() + r.link_samples.size());
  const double estimate = static_cast<double>(trace_event_count({{"run", &g, &r}}) * kTraceBytesPerEvent);
  CHECK(estimate > 0.5 * static_cast<double>(out.str().size()));
  CHECK(estimate < 2.0 * static_cast<double>(out.str().size()));

  bool found_compute = false, found_send = false, found_thread = false;
  for (const auto& e : events) {
    if (e["ph"] == "X") {
      CHECK(e["ts"].is_number());
      CHECK(e["dur"].is_number());
      CHECK(e["dur"].get<double>() >= 0);
    }
    if (e["ph"] == "X" && e["name"] == "attn_fwd step 2" && e["pid"] == 1 && e["tid"] == 64) {
      found_compute = true;  // GPU 3 = node 1, local 1, stream 0
      CHECK(e["args"]["flops"] == 1e12);
      CHECK(e["args"]["block_q"] == 4096);
      const auto id = e["args"]["task"].get<std::size_t>();
      CHECK(e["ts"].get<double>() == Approx(r.times[id].start * 1e6).margin(1e-3));
      CHECK(e["dur"].get<double>() == Approx((r.times[id].end - r.times[id].start) * 1e6).margin(1e-3));
    }
    if (e["ph"] == "X" && e["name"] == "kv -> gpu 0" && e["pid"] == 1) {
      found_send = true;           // GPU 3 sends to GPU 0 over the network
      CHECK(e["tid"] == 64 + 32);  // local GPU 1, send lane 0
      CHECK(e["args"]["bytes"] == 1e8);
    }
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "gpu 1 send") found_thread = true;
    if (e["ph"] == "C") {
      CHECK(e["name"].get<std::string>().rfind("n", 0) == 0);
      CHECK(e["args"]["GB/s"].is_number());
    }
  }
  CHECK(found_compute);
  CHECK(found_send);
  CHECK(found_thread);
}

TEST_CASE("several runs are laid end to end") {
  const topo::Topology t = test::star(2, 100e9, 1e-6);
  const TaskGraph g = make_ring_graph(2, {.steps = 2, .flops = 1e12, .bytes = 1e8, .block = 4096});
  const SimResult r = make_engine("analytic")->run(g, t, make_cost_models(), {});
  std::ostringstream out;
  write_chrome_trace(out, {{"forward", &g, &r}, {"backward", &g, &r}}, t);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  double last_forward_end = 0, first_backward = 1e300;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const double ts = e["ts"].get<double>();
    if (e["cat"] == "forward") last_forward_end = std::max(last_forward_end, ts + e["dur"].get<double>());
    if (e["cat"] == "backward") first_backward = std::min(first_backward, ts);
  }
  CHECK(count(doc["traceEvents"], "X") == 2 * g.size());
  CHECK(first_backward == Approx(r.makespan_s * 1e6).margin(1e-3));
  CHECK(last_forward_end <= first_backward + 1e-3);
}

TEST_CASE("overlapping sends of one GPU go to separate lanes, so no thread's slices overlap") {
  const topo::Topology t = test::star(3, 100e9, 1e-6);
  TaskGraph g(3);
  for (int i = 0; i < 3; ++i) {
    g.add_transfer({.src = 0,
                    .dst = 1 + i % 2,
                    .channel = 0,
                    .phase = Phase::Forward,
                    .payload = Payload::KV,
                    .bytes = 1e9,
                    .step = i},
                   {});
  }
  const SimResult r = make_engine("event")->run(g, t, make_cost_models(), {});
  std::ostringstream out;
  write_chrome_trace(out, g, r, t);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  std::map<int, std::vector<std::pair<double, double>>> by_tid;
  std::set<std::string> names;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X") by_tid[e["tid"].get<int>()].push_back({e["ts"].get<double>(), e["dur"].get<double>()});
    if (e["ph"] == "M" && e["name"] == "thread_name") names.insert(e["args"]["name"].get<std::string>());
  }
  CHECK(by_tid.size() == 3);
  CHECK(names == std::set<std::string>{"gpu 0 send", "gpu 0 send 1", "gpu 0 send 2"});
  for (auto& [tid, slices] : by_tid) {
    std::sort(slices.begin(), slices.end());
    for (std::size_t i = 1; i < slices.size(); ++i)
      CHECK(slices[i].first >= slices[i - 1].first + slices[i - 1].second);
  }
}
