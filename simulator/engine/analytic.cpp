// The analytic engine: one pass over the tasks in id order (a topological order).
//
//   compute:  start = max(end of its dependencies, end of the previous task on its stream)
//             end   = start + compute model seconds
//   transfer: start = end of its dependencies
//             end   = start + latency(path) + bytes / min over its route of link capacity
//
// No transfer ever waits for another, and compute never slows for the transfers it overlaps
// (ComputeModel::overlap_slowdown), so this is exact when no two transfers overlap on a Shared
// link and overlap is free, and optimistic otherwise; the event engine gives the same times in
// the first case (tests check it, with a calibration whose comm_ctas is 0) and models the
// sharing and the slowdown in the second. It costs O(tasks + deps), plus
// a sort of the link changes when link usage is recorded; without EngineOptions::record_times
// it keeps only each task's end (8 bytes, in huge pages) for its successors to read.
#include <algorithm>
#include <span>

#include "common/progress.hpp"
#include "simulator/detail/engine/engines.hpp"
#include "simulator/detail/engine/routes.hpp"

namespace burst::sim {
namespace {

class AnalyticEngine final : public Engine {
 public:
  [[nodiscard]] std::string name() const override { return "analytic"; }

  [[nodiscard]] SimResult run(const TaskGraph& graph, const topo::Topology& topology, const CostModels& models,
                              const EngineOptions& options) const override {
    const Routes routes(graph, topology, *models.comm);
    const int streams = graph.streams();
    const topo::GpuSpec& gpu = topology.gpu();
    const std::span<const Task> tasks = graph.tasks();

    SimResult result;
    const bool times = options.record_times || options.record_links;
    if (times) result.times.resize(graph.size());
    result.compute_busy_s.assign(static_cast<std::size_t>(graph.gpus()), 0.0);
    result.link_bytes.assign(static_cast<std::size_t>(routes.link_count()), 0.0);
    std::vector<double> stream_free(static_cast<std::size_t>(graph.gpus()) * static_cast<std::size_t>(streams), 0.0);
    BigVector<double> end;  // per task; every entry written in id order before it is read
    end.resize(graph.size());

    Progress progress("analytic simulation", static_cast<std::int64_t>(graph.size()), options.progress);
    const auto n = static_cast<TaskId>(graph.size());
    for (TaskId id = 0; id < n; ++id) {
      const Task& t = tasks[static_cast<std::size_t>(id)];
      double ready = 0;
      for (const TaskId d : graph.deps(id)) ready = std::max(ready, end[static_cast<std::size_t>(d)]);
      double start = ready, finish;
      if (t.kind == TaskKind::Compute) {
        double& free = stream_free[static_cast<std::size_t>(t.gpu) * static_cast<std::size_t>(streams) + t.stream];
        const double seconds = models.compute->seconds(t, gpu);
        start = std::max(ready, free);
        finish = start + seconds;
        free = finish;
        result.compute_busy_s[static_cast<std::size_t>(t.gpu)] += seconds;
      } else {
        const Route& route = routes.of(id);
        finish = t.gpu == t.peer ? ready : (ready + route.latency_s) + t.amount / route.bottleneck_Bps;
        for (const topo::LinkId l : routes.links(route)) result.link_bytes[static_cast<std::size_t>(l)] += t.amount;
      }
      end[static_cast<std::size_t>(id)] = finish;
      if (times) result.times[static_cast<std::size_t>(id)] = {start, finish};
      result.makespan_s = std::max(result.makespan_s, finish);
      if ((id & 0xFFFF) == 0) progress.update(id);
    }
    if (options.record_links) record_links(graph, routes, result);
    if (!options.record_times) result.times = {};
    progress.finish();
    return result;
  }

 private:
  // Link usage as this engine sees it: every transfer holds its route's bottleneck rate on
  // each of its links from the end of its latency to its end (so a link's total may exceed
  // its capacity where transfers overlap: that is the contention this engine ignores).
  static void record_links(const TaskGraph& graph, const Routes& routes, SimResult& result) {
    struct Change {
      double time;
      topo::LinkId link;
      double delta;
    };
    std::vector<Change> changes;
    for (std::size_t id = 0; id < graph.size(); ++id) {
      const Task& t = graph.tasks()[id];
      if (t.kind != TaskKind::Transfer || t.gpu == t.peer || t.amount <= 0) continue;
      const Route& route = routes.of(static_cast<TaskId>(id));
      const TaskTime& time = result.times[id];
      for (const topo::LinkId l : routes.links(route)) {
        changes.push_back({time.start + route.latency_s, l, route.bottleneck_Bps});
        changes.push_back({time.end, l, -route.bottleneck_Bps});
      }
    }
    std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
      return a.time < b.time || (a.time == b.time && a.link < b.link);
    });
    std::vector<double> rate(static_cast<std::size_t>(routes.link_count()), 0.0);
    std::vector<std::int32_t> active(rate.size(), 0);
    for (std::size_t i = 0; i < changes.size();) {
      const double before = rate[static_cast<std::size_t>(changes[i].link)];
      std::size_t j = i;
      for (; j < changes.size() && changes[j].time == changes[i].time && changes[j].link == changes[i].link; ++j) {
        rate[static_cast<std::size_t>(changes[j].link)] += changes[j].delta;
        active[static_cast<std::size_t>(changes[j].link)] += changes[j].delta > 0 ? 1 : -1;
      }
      double& now = rate[static_cast<std::size_t>(changes[i].link)];
      if (active[static_cast<std::size_t>(changes[i].link)] == 0) now = 0;  // no drift from += and -=
      if (now != before) result.link_samples.push_back({changes[i].link, changes[i].time, now});
      i = j;
    }
  }
};

}  // namespace

std::unique_ptr<Engine> make_analytic_engine() { return std::make_unique<AnalyticEngine>(); }

}  // namespace burst::sim
