// The what-if grid (see whatif.hpp).
#include "planner/whatif.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/interrupt.hpp"
#include "common/progress.hpp"
#include "common/saturating.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "planner/capacity.hpp"
#include "topologies/variants.hpp"

namespace burst::planner {
namespace {

const std::vector<std::string>& knobs() {
  static const std::vector<std::string> list = {"nodes", "nets_per_node", "intra_bw",  "seq", "memory_budget", "tp",
                                                "dp",    "batch",         "checkpoint"};
  return list;
}

int parse_count(const std::string& text, const std::string& field) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < 1) {
    throw Error(Problem{field, fmt::format("'{}' is not a count", text), "a whole number >= 1", ""});
  }
  return value;
}

// Parses a value of a knob (throws burst::Error naming the field).
void check_value(const std::string& knob, const std::string& value, const std::string& field) {
  if (knob == "nodes" || knob == "nets_per_node" || knob == "tp" || knob == "dp" || knob == "batch") {
    (void)parse_count(value, field);
  } else if (knob == "intra_bw") {
    (void)units::parse_bandwidth(value, field);
  } else if (knob == "seq") {
    (void)units::parse_tokens(value, field);
  } else if (knob == "checkpoint") {
    if (value != "own") (void)parse_checkpoint_for_every_family(value, field);
  } else {
    (void)units::parse_bytes(value, field);
  }
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = text.find(sep, begin);
    parts.push_back(text.substr(begin, end - begin));
    if (end == std::string::npos) return parts;
    begin = end + 1;
  }
}

// The cluster and request of one grid point.
void apply(const std::string& knob, const std::string& value, topo::Topology& topology, SearchRequest& request) {
  const std::string field = "--vary " + knob;
  if (knob == "nodes") topology = topology.with_nodes(parse_count(value, field));
  if (knob == "nets_per_node") topology = topo::with_nets_per_node(topology, parse_count(value, field), field);
  if (knob == "intra_bw") topology = topo::with_intra_bandwidth(topology, units::parse_bandwidth(value, field), field);
  if (knob == "seq") request.job.seq = units::parse_tokens(value, field);
  if (knob == "memory_budget") request.memory_budget_bytes = units::parse_bytes(value, field);
  if (knob == "tp") request.only_tp = parse_count(value, field);  // the search at this degree alone
  if (knob == "dp") request.only_dp = parse_count(value, field);
  if (knob == "batch") request.job.batch = parse_count(value, field);
  if (knob == "checkpoint") {  // own: each family's own policy
    request.checkpoint = value == "own" ? std::nullopt : std::optional(parse_checkpoint_for_every_family(value, field));
  }
}

// Node counts first: the other cluster variants apply to the resized cluster.
int apply_order(const std::string& knob) { return knob == "nodes" ? 0 : 1; }

}  // namespace

std::vector<Variation> parse_variations(const std::vector<std::string>& specs) {
  Problems problems;
  std::vector<Variation> grid;
  for (const std::string& spec : specs) {
    const std::size_t eq = spec.find('=');
    const std::string knob = spec.substr(0, eq);
    const std::string field = "--vary " + knob;
    if (eq == std::string::npos || eq + 1 == spec.size()) {
      problems.add({"--vary", fmt::format("'{}' has no values", spec), "knob=v1,v2,...", "e.g. --vary nodes=4,8,16"});
      continue;
    }
    if (std::find(knobs().begin(), knobs().end(), knob) == knobs().end()) {
      problems.add(
          {"--vary", fmt::format("unknown knob '{}'", knob), text::join(knobs()), text::did_you_mean(knob, knobs())});
      continue;
    }
    if (std::any_of(grid.begin(), grid.end(), [&](const Variation& v) { return v.knob == knob; })) {
      problems.add({field, "given twice", "each knob once", "list all its values in one --vary"});
      continue;
    }
    Variation v{knob, split(spec.substr(eq + 1), ',')};
    for (const std::string& value : v.values) {
      try {
        check_value(knob, value, field);
      } catch (const Error& e) {
        for (const Problem& p : e.problems()) problems.add(p);
      }
    }
    grid.push_back(std::move(v));
  }
  problems.throw_if_any();
  return grid;
}

std::uint64_t grid_points(const std::vector<Variation>& grid) {
  std::uint64_t total = 1;
  for (const Variation& v : grid) {
    const std::uint64_t n = v.values.size();
    total = n != 0 && total > kSizeCeiling / n ? kSizeCeiling : std::min(total * n, kSizeCeiling);
  }
  return total;
}

std::vector<WhatIfPoint> what_if(const SearchRequest& request, const topo::Topology& topology,
                                 const std::vector<Variation>& grid) {
  const std::uint64_t total = grid_points(grid);
  std::vector<WhatIfPoint> points;
  Progress progress("what-if", static_cast<std::int64_t>(std::min<std::uint64_t>(total, INT64_MAX)), request.progress);
  for (std::uint64_t index = 0; index < total && !interrupt_requested(); ++index) {
    WhatIfPoint point;
    std::uint64_t rest = index;
    for (std::size_t d = grid.size(); d-- > 0;) {  // last knob fastest
      const Variation& v = grid[d];
      point.setting.insert(point.setting.begin(), {v.knob, v.values[rest % v.values.size()]});
      rest /= v.values.size();
    }
    std::vector<std::pair<std::string, std::string>> ordered = point.setting;
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const auto& a, const auto& b) { return apply_order(a.first) < apply_order(b.first); });
    topo::Topology cluster = topology;
    SearchRequest r = request;
    r.progress = false;
    for (const auto& [knob, value] : ordered) apply(knob, value, cluster, r);
    point.outcome = scaling_row(search(r, cluster), cluster);
    points.push_back(std::move(point));
    progress.update(static_cast<std::int64_t>(points.size()));
  }
  progress.finish();
  return points;
}

std::string what_if_csv(const std::vector<WhatIfPoint>& points) {
  std::string out;
  if (points.empty()) return out;
  for (const auto& [knob, value] : points.front().setting) out += knob + ",";
  out += "gpus,strategy,feasible,tokens_per_s_per_gpu,step_time_s,mfu,memory_bytes_per_gpu,reason\n";
  for (const WhatIfPoint& p : points) {
    for (const auto& [knob, value] : p.setting) out += value + ",";
    const ScalingRow& o = p.outcome;
    std::string reason = o.reason;
    std::replace(reason.begin(), reason.end(), '"', '\'');
    out += fmt::format("{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},\"{}\"\n", o.gpus, o.strategy, o.feasible ? "yes" : "no",
                       o.tokens_per_s_per_gpu, o.step_time_s, o.mfu, o.memory_total_bytes, reason);
  }
  return out;
}

Json what_if_json(const std::vector<WhatIfPoint>& points) {
  Json out = Json::array();
  for (const WhatIfPoint& p : points) {
    Json setting = Json::object();
    for (const auto& [knob, value] : p.setting) setting[knob] = value;
    const ScalingRow& o = p.outcome;
    out.push_back(Json{{"setting", std::move(setting)},
                       {"gpus", o.gpus},
                       {"strategy", o.strategy},
                       {"feasible", o.feasible},
                       {"tokens_per_s_per_gpu", o.tokens_per_s_per_gpu},
                       {"step_time_s", o.step_time_s},
                       {"mfu", o.mfu},
                       {"memory_bytes_per_gpu", o.memory_total_bytes},
                       {"reason", o.reason}});
  }
  return out;
}

}  // namespace burst::planner
