// The analytic engine: one pass over the tasks in id order (a topological order).
//
//   compute:  start = max(end of its dependencies, end of the previous task on its stream)
//             end   = start + compute model seconds
//   transfer: start = end of its dependencies
//             end   = start + latency(path) + bytes / min over its route of link capacity
//
// No transfer ever waits for another, so this is exact when no two transfers overlap on a
// Shared link, and optimistic otherwise; the event engine gives the same times in the first
// case (tests check it) and models the sharing in the second. It costs O(tasks + deps).
#include <algorithm>

#include "common/progress.hpp"
#include "simulator/engine/engines.hpp"
#include "simulator/engine/routes.hpp"

namespace burst::sim {
namespace {

class AnalyticEngine final : public Engine {
 public:
  [[nodiscard]] std::string name() const override { return "analytic"; }

  [[nodiscard]] SimResult run(const TaskGraph& graph, const topo::Topology& topology, const CostModels& models,
                              const EngineOptions& options) const override {
    const Routes routes(graph, topology, *models.comm);
    const int streams = streams_per_gpu(graph);
    const topo::GpuSpec& gpu = topology.gpu();

    SimResult result;
    result.times.resize(graph.size());
    result.compute_busy_s.assign(static_cast<std::size_t>(graph.gpus()), 0.0);
    result.link_bytes.assign(static_cast<std::size_t>(routes.link_count()), 0.0);
    std::vector<double> stream_free(static_cast<std::size_t>(graph.gpus()) * static_cast<std::size_t>(streams), 0.0);

    Progress progress("analytic simulation", static_cast<std::int64_t>(graph.size()), options.progress);
    const auto n = static_cast<TaskId>(graph.size());
    for (TaskId id = 0; id < n; ++id) {
      const Task& t = graph.task(id);
      double ready = 0;
      for (const TaskId d : graph.deps(id)) ready = std::max(ready, result.times[static_cast<std::size_t>(d)].end);
      TaskTime& time = result.times[static_cast<std::size_t>(id)];
      if (t.kind == TaskKind::Compute) {
        double& free = stream_free[static_cast<std::size_t>(t.gpu) * static_cast<std::size_t>(streams) + t.stream];
        const double seconds = models.compute->seconds(t, gpu);
        time.start = std::max(ready, free);
        time.end = time.start + seconds;
        free = time.end;
        result.compute_busy_s[static_cast<std::size_t>(t.gpu)] += seconds;
      } else {
        const Route& route = routes.of(id);
        time.start = ready;
        time.end = t.gpu == t.peer ? ready : (ready + route.latency_s) + t.amount / route.bottleneck_Bps;
        for (const topo::LinkId l : routes.links(route)) result.link_bytes[static_cast<std::size_t>(l)] += t.amount;
      }
      result.makespan_s = std::max(result.makespan_s, time.end);
      if ((id & 0xFFFF) == 0) progress.update(id);
    }
    progress.finish();
    return result;
  }
};

}  // namespace

std::unique_ptr<Engine> make_analytic_engine() { return std::make_unique<AnalyticEngine>(); }

}  // namespace burst::sim
