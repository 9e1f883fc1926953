// Lays a simulated run out as trace tracks (see chrome_trace.hpp) and streams it through the
// shared writer, common/chrome_trace.hpp (a 1024-GPU layer has millions of events; building a
// JSON tree first would triple the memory).
#include "simulator/engine/chrome_trace.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "common/chrome_trace.hpp"

namespace burst::sim {
namespace {

// tid = local GPU * 64 + slot: compute stream s in slot s (0-31), send lane k in slot 32 + k.
constexpr int kSlotsPerGpu = 64;
constexpr int kLanes = 32;

class TraceLayout {
 public:
  TraceLayout(std::ostream& out, const topo::Topology& topology) : writer_(out), topology_(topology) {}

  void write(const std::vector<TraceRun>& runs) {
    assign_lanes(runs);
    metadata(runs);
    double offset = 0;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      tasks(runs[r], lanes_[r], offset);
      counters(runs[r], offset);
      offset += runs[r].result->makespan_s;
    }
    writer_.finish();
  }

 private:
  [[nodiscard]] int tid(int gpu, int slot) const { return topology_.local_of(gpu) * kSlotsPerGpu + slot; }
  [[nodiscard]] static int compute_slot(const Task& t) { return std::min(static_cast<int>(t.stream), kLanes - 1); }

  // Trace viewers want the slices of one thread properly nested, but a GPU may have several
  // sends in flight: each send goes to the first lane of its GPU that is free by its start
  // (interval partitioning), so lanes never overlap (up to 32 lanes; beyond, the last is shared).
  void assign_lanes(const std::vector<TraceRun>& runs) {
    for (const TraceRun& run : runs) {
      const auto& times = run.result->times;
      std::vector<TaskId> sends;
      for (std::size_t id = 0; id < run.graph->size(); ++id) {
        if (run.graph->tasks()[id].kind == TaskKind::Transfer) sends.push_back(static_cast<TaskId>(id));
      }
      std::sort(sends.begin(), sends.end(), [&](TaskId a, TaskId b) {
        const int ga = run.graph->task(a).gpu, gb = run.graph->task(b).gpu;
        return ga < gb ||
               (ga == gb && times[static_cast<std::size_t>(a)].start < times[static_cast<std::size_t>(b)].start);
      });
      std::vector<std::uint8_t> lane(run.graph->size(), 0);
      std::vector<double> free_at;
      int gpu = -1;
      for (const TaskId id : sends) {
        const TaskTime& t = times[static_cast<std::size_t>(id)];
        if (run.graph->task(id).gpu != gpu) {
          gpu = run.graph->task(id).gpu;
          free_at.clear();
        }
        std::size_t k = 0;
        while (k < free_at.size() && free_at[k] > t.start) ++k;
        if (k == free_at.size() && k < kLanes) free_at.push_back(t.end);
        k = std::min<std::size_t>(k, kLanes - 1);
        free_at[k] = std::max(free_at[k], t.end);
        lane[static_cast<std::size_t>(id)] = static_cast<std::uint8_t>(k);
        used_.insert({gpu, kLanes + static_cast<int>(k)});
      }
      lanes_.push_back(std::move(lane));
    }
  }

  void metadata(const std::vector<TraceRun>& runs) {
    for (const TraceRun& run : runs) {
      for (const Task& t : run.graph->tasks()) {
        if (t.kind == TaskKind::Compute) used_.insert({t.gpu, compute_slot(t)});
      }
    }
    for (int node = 0; node < topology_.nodes(); ++node) writer_.process(node, fmt::format("node {}", node), node);
    for (const auto& [gpu, slot] : used_) {
      const int local = topology_.local_of(gpu);
      const std::string name = slot < kLanes    ? fmt::format("gpu {} stream {}", local, slot)
                               : slot == kLanes ? fmt::format("gpu {} send", local)
                                                : fmt::format("gpu {} send {}", local, slot - kLanes);
      writer_.thread(topology_.node_of(gpu), tid(gpu, slot), name, tid(gpu, slot));
    }
    writer_.process(topology_.nodes(), "links", topology_.nodes());
  }

  void tasks(const TraceRun& run, const std::vector<std::uint8_t>& lanes, double offset) {
    for (std::size_t id = 0; id < run.graph->size(); ++id) {
      const Task& t = run.graph->tasks()[id];
      const TaskTime& time = run.result->times[id];
      const bool compute = t.kind == TaskKind::Compute;
      const std::string name = compute ? fmt::format("{} step {}", to_string(t.kernel), t.step)
                                       : fmt::format("{} -> gpu {}", to_string(t.payload), t.peer);
      const trace::Slice slice{.name = name,
                               .category = run.name,
                               .pid = topology_.node_of(t.gpu),
                               .tid = compute ? tid(t.gpu, compute_slot(t)) : tid(t.gpu, kLanes + lanes[id]),
                               .start_s = offset + time.start,
                               .duration_s = time.end - time.start};
      if (compute) {
        writer_.complete(slice, {{"task", id}, {"flops", t.amount}, {"block_q", t.block_q}, {"block_k", t.block_k}});
      } else {
        writer_.complete(slice, {{"task", id},
                                 {"bytes", t.amount},
                                 {"step", t.step},
                                 {"channel", static_cast<int>(t.stream)},
                                 {"dst", t.peer}});
      }
    }
  }

  void counters(const TraceRun& run, double offset) {
    for (const LinkSample& s : run.result->link_samples) {
      writer_.counter(link_name(s.link), topology_.nodes(), offset + s.time, "GB/s", s.bytes_per_second * 1e-9);
    }
  }

  const std::string& link_name(topo::LinkId link) {
    if (link_names_.empty()) link_names_.resize(static_cast<std::size_t>(topology_.link_count()));
    std::string& name = link_names_[static_cast<std::size_t>(link)];
    if (name.empty()) name = topology_.link_name(link);
    return name;
  }

  trace::ChromeTraceWriter writer_;
  const topo::Topology& topology_;
  std::vector<std::string> link_names_;           // filled on first use
  std::set<std::pair<int, int>> used_;            // (gpu, slot) threads that have events
  std::vector<std::vector<std::uint8_t>> lanes_;  // per run, per task: send lane
};

}  // namespace

void write_chrome_trace(std::ostream& out, const std::vector<TraceRun>& runs, const topo::Topology& topology) {
  TraceLayout(out, topology).write(runs);
}

std::uint64_t trace_event_count(const std::vector<TraceRun>& runs) {
  std::uint64_t events = 0;
  for (const TraceRun& run : runs) events += run.graph->size() + run.result->link_samples.size();
  return events;
}

void write_chrome_trace(std::ostream& out, const TaskGraph& graph, const SimResult& result,
                        const topo::Topology& topology) {
  write_chrome_trace(out, {TraceRun{"run", &graph, &result}}, topology);
}

}  // namespace burst::sim
