// The shared Chrome trace writer: the file parses as JSON with the shapes Perfetto needs
// (metadata naming and ordering processes and threads, "X" slices with ts and dur, "i" instants
// scoped to their thread, "C" counter samples), times in microseconds, text escaped, numbers
// that are not finite written as null.
#include <cmath>
#include <limits>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/chrome_trace.hpp"

using burst::trace::ChromeTraceWriter;
using burst::trace::Slice;

namespace {

nlohmann::json only(const nlohmann::json& events, const std::string& ph, const std::string& name) {
  nlohmann::json found = nlohmann::json::array();
  for (const auto& e : events) {
    if (e["ph"] == ph && e["name"] == name) found.push_back(e);
  }
  return found;
}

}  // namespace

TEST_CASE("the writer's file is a trace: metadata, slices, instants, counters") {
  std::ostringstream out;
  ChromeTraceWriter w(out);
  w.process(3, "node 3", 7);
  w.thread(3, 65, "gpu 1 stream 1", 65);
  w.complete(
      {.name = "attn_fwd step 2", .category = "forward", .pid = 3, .tid = 65, .start_s = 1.5e-3, .duration_s = 2e-6},
      {{"step", 2}, {"flops", 1e12}, {"channel", "kv ring"}});
  w.instant({.name = "kv ring -> rank 1", .category = "backward", .pid = 3, .tid = 66, .start_s = 0.25});
  w.counter("n0 nic0 up", 4, 1e-9, "GB/s", 12.5);
  w.finish();

  const nlohmann::json doc = nlohmann::json::parse(out.str());
  CHECK(doc["displayTimeUnit"] == "ns");
  const auto& events = doc["traceEvents"];
  REQUIRE(events.size() == 7);  // 2 metadata events per name, then 3 events

  CHECK(only(events, "M", "process_name")[0]["args"]["name"] == "node 3");
  CHECK(only(events, "M", "process_sort_index")[0]["args"]["sort_index"] == 7);
  const auto thread = only(events, "M", "thread_name")[0];
  CHECK(thread["pid"] == 3);
  CHECK(thread["tid"] == 65);
  CHECK(thread["args"]["name"] == "gpu 1 stream 1");

  // 1.5 ms = 1500 us, 2 us long.
  const auto slice = only(events, "X", "attn_fwd step 2")[0];
  CHECK(slice["cat"] == "forward");
  CHECK(slice["ts"].get<double>() == Approx(1500.0));
  CHECK(slice["dur"].get<double>() == Approx(2.0));
  CHECK(slice["args"]["step"] == 2);
  CHECK(slice["args"]["flops"] == 1e12);
  CHECK(slice["args"]["channel"] == "kv ring");

  const auto tick = only(events, "i", "kv ring -> rank 1")[0];
  CHECK(tick["s"] == "t");
  CHECK(tick["ts"].get<double>() == Approx(250000.0));
  CHECK(!tick.contains("dur"));

  // 1 ns = 0.001 us: the nanosecond decimals survive.
  const auto sample = only(events, "C", "n0 nic0 up")[0];
  CHECK(sample["pid"] == 4);
  CHECK(sample["ts"].get<double>() == Approx(0.001));
  CHECK(sample["args"]["GB/s"] == 12.5);
}

TEST_CASE("the writer escapes text and writes numbers that are not finite as null") {
  std::ostringstream out;
  ChromeTraceWriter w(out);
  w.process(0, "rack \"A\"\\1\n", 0);
  w.complete({.name = "tab\there", .category = "run"},
             {{"nan", std::nan("")}, {"inf", std::numeric_limits<double>::infinity()}});
  w.finish();
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  const auto& events = doc["traceEvents"];
  CHECK(events[0]["args"]["name"] == "rack \"A\"\\1\n");
  CHECK(events[2]["name"] == "tab\there");
  CHECK(events[2]["args"]["nan"].is_null());
  CHECK(events[2]["args"]["inf"].is_null());
}

TEST_CASE("an empty trace is still a valid file") {
  std::ostringstream out;
  ChromeTraceWriter w(out);
  w.finish();
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  CHECK(doc["traceEvents"].empty());
}
