// The measured trace of run_attention on every rank of the job, written by rank 0: it parses as
// JSON, names every rank's process, has one compute slice per block computed (the report's
// blocks_computed counts, per phase), no negative time or duration, and each rank's backward
// slices after its forward ones (the phases run between barriers).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "common/token_sets.hpp"
#include "runtime/comm/mpi_communicator.hpp"
#include "runtime/executor/attention_run.hpp"

using namespace burst;

namespace {

// A flat zigzag ring over the job's ranks, two ranks per node, causal mask, tiny heads.
plan::Plan flat_plan(int world, BackwardMode backward) {
  plan::Plan p;
  p.job.model.name = "test";
  p.job.model.layers = 1;
  p.job.model.heads = 2;
  p.job.model.kv_heads = 2;
  p.job.model.head_dim = 8;
  p.job.model.hidden = 16;
  p.job.seq = 4 * layout_multiple(Layout::Zigzag, world);
  p.job.mask = parse_mask("causal", "mask");
  p.strategy.name = "burst";
  p.strategy.cp = world;
  p.strategy.ring = RingKind::Flat;
  p.strategy.inner = world;
  p.strategy.outer = 1;
  p.strategy.layout = Layout::Zigzag;
  p.strategy.backward = backward;
  plan::Ring flat{"flat", 0, {}};
  for (int r = 0; r < world; ++r) {
    p.ranks.push_back({r, r / 2, r % 2});
    flat.order.push_back(r);
  }
  p.rings.push_back(flat);
  return p;
}

}  // namespace

TEST_CASE("run_attention's measured trace has every rank, one slice per block computed, no negative time") {
  const auto comm = rt::make_mpi_communicator({30});
  const int world = comm->size();
  for (const BackwardMode backward : {BackwardMode::QRing, BackwardMode::KvRing}) {
    rt::RunTrace trace;
    const auto report = rt::run_attention(flat_plan(world, backward), *comm, {}, &trace);
    if (comm->rank() != 0) {
      CHECK(trace.ranks.empty());
      continue;
    }
    REQUIRE(static_cast<int>(trace.ranks.size()) == world);
    const auto path = std::filesystem::temp_directory_path() / fmt::format("burst-run-trace-{}.json", getpid());
    rt::write_run_trace(path.string(), trace);
    std::ifstream in(path);
    const nlohmann::json doc = nlohmann::json::parse(in);
    std::filesystem::remove(path);

    REQUIRE(doc.contains("traceEvents"));
    std::map<int, std::string> process_names;
    std::map<std::string, int> computed;                // by phase
    std::map<int, double> forward_end, backward_start;  // by rank
    for (const auto& e : doc["traceEvents"]) {
      if (e["ph"] == "M" && e["name"] == "process_name") process_names[e["pid"].get<int>()] = e["args"]["name"];
      if (e["ph"] != "X" && e["ph"] != "i") continue;
      const double ts = e["ts"].get<double>();
      const int pid = e["pid"].get<int>();
      CHECK(ts >= 0);
      if (e["ph"] == "X") {
        const double end = ts + e["dur"].get<double>();
        CHECK(e["dur"].get<double>() >= 0);
        if (e["cat"] == "forward") forward_end[pid] = std::max(forward_end[pid], end);
        if (e["cat"] == "backward") {
          const auto it = backward_start.try_emplace(pid, ts).first;
          it->second = std::min(it->second, ts);
        }
        if (e["tid"] == 0) ++computed[e["cat"].get<std::string>()];
      }
    }
    for (int r = 0; r < world; ++r) {
      REQUIRE(process_names.count(r) == 1);
      CHECK(process_names[r] == fmt::format("node {} gpu {} (rank {})", r / 2, r % 2, r));
      CHECK(backward_start[r] >= forward_end[r]);
    }
    CHECK(computed["forward"] == report->messages.blocks_computed.forward);
    CHECK(computed["backward"] == report->messages.blocks_computed.backward);
    CHECK(computed["forward"] > 0);
  }
}
