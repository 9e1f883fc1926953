// Golden plans (tests/data/plans/README.md): each is rebuilt from its own cluster, job and
// budget, and must come out the same: strategy and knobs exactly, numbers within 1e-9.
// BURST_UPDATE_GOLDEN=1 writes the rebuilt plans over the golden files instead (after a change
// to the cost model made on purpose; review the diff before committing it).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <functional>

#include "planner/plan_builder.hpp"
#include "topologies/json_format.hpp"

using namespace burst;

namespace {

// Differences between two JSON documents, as "pointer: a vs b" lines (numbers compared with a
// relative tolerance, everything else exactly).
void diff(const Json& a, const Json& b, const std::string& at, std::vector<std::string>& out) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    if (std::fabs(x - y) > 1e-9 * std::max(std::fabs(x), std::fabs(y)))
      out.push_back(at + ": " + a.dump() + " vs " + b.dump());
    return;
  }
  if (a.type() != b.type() || (!a.is_structured() && a != b) || a.size() != b.size()) {
    out.push_back(at + ": " + a.dump().substr(0, 120) + " vs " + b.dump().substr(0, 120));
    return;
  }
  if (a.is_object()) {
    for (const auto& [key, value] : a.items()) {
      if (!b.contains(key)) {
        out.push_back(at + "/" + key + ": missing");
        continue;
      }
      diff(value, b[key], at + "/" + key, out);
    }
  } else if (a.is_array()) {
    for (std::size_t i = 0; i < a.size(); ++i) diff(a[i], b[i], at + "/" + std::to_string(i), out);
  }
}

}  // namespace

TEST_CASE("golden plans come out the same", "[golden]") {
  const std::string dir = std::string(BURST_TEST_DATA) + "/plans";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    const std::string path = entry.path().string();
    const plan::Plan golden = plan::read_plan(path);
    const topo::Topology topology = topo::parse_topology_json(golden.cluster, path + ":/cluster");
    const planner::SearchRequest request = planner::replan_request(golden);
    const planner::SearchResult result = planner::search(request, topology);
    REQUIRE(result.chosen_plan() != nullptr);
    const plan::Plan rebuilt = planner::build_plan(result, request, topology);
    if (const char* update = std::getenv("BURST_UPDATE_GOLDEN"); update != nullptr && std::string_view(update) == "1") {
      plan::write_plan(rebuilt, path);
      WARN("BURST_UPDATE_GOLDEN=1: rewrote " << path);
      ++checked;
      continue;
    }
    std::vector<std::string> differences;
    diff(plan::to_json(golden), plan::to_json(rebuilt), "", differences);
    INFO(path << "\n"
              << differences.size() << " differences, first: " << (differences.empty() ? "" : differences.front()));
    CHECK(differences.empty());
    ++checked;
  }
  CHECK(checked >= 4);
}
