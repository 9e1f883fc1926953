// Writes the trace directly with fmt (a 1024-GPU layer has millions of events; building a
// JSON tree first would triple the memory). Strings are escaped by nlohmann's serializer.
#include "simulator/engine/chrome_trace.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace burst::sim {
namespace {

// tid = local GPU * 64 + slot: compute stream s in slot s (0-31), send lane k in slot 32 + k.
constexpr int kSlotsPerGpu = 64;
constexpr int kLanes = 32;

std::string quoted(const std::string& text) { return nlohmann::json(text).dump(); }

class TraceWriter {
 public:
  TraceWriter(std::ostream& out, const topo::Topology& topology) : out_(out), topology_(topology) {}

  void write(const std::vector<TraceRun>& runs) {
    assign_lanes(runs);
    out_ << "{\"traceEvents\":[\n";
    metadata(runs);
    double offset = 0;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      tasks(runs[r], lanes_[r], offset);
      counters(runs[r], offset);
      offset += runs[r].result->makespan_s;
    }
    out_ << "\n],\"displayTimeUnit\":\"ns\"}\n";
  }

 private:
  void event(const std::string& json) {
    if (!first_) out_ << ",\n";
    first_ = false;
    out_ << json;
  }

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
        return ga < gb || (ga == gb && times[static_cast<std::size_t>(a)].start < times[static_cast<std::size_t>(b)].start);
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
    for (int node = 0; node < topology_.nodes(); ++node) {
      event(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"node {}"}}}})", node,
                        node));
      event(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
                        node, node));
    }
    for (const auto& [gpu, slot] : used_) {
      const int local = topology_.local_of(gpu);
      const std::string name = slot < kLanes ? fmt::format("gpu {} stream {}", local, slot)
                               : slot == kLanes ? fmt::format("gpu {} send", local)
                                                : fmt::format("gpu {} send {}", local, slot - kLanes);
      event(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})",
                        topology_.node_of(gpu), tid(gpu, slot), quoted(name)));
      event(fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
                        topology_.node_of(gpu), tid(gpu, slot), tid(gpu, slot)));
    }
    event(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"links"}}}})",
                      topology_.nodes()));
  }

  void tasks(const TraceRun& run, const std::vector<std::uint8_t>& lanes, double offset) {
    const std::string category = quoted(run.name);
    for (std::size_t id = 0; id < run.graph->size(); ++id) {
      const Task& t = run.graph->tasks()[id];
      const TaskTime& time = run.result->times[id];
      const double ts = (offset + time.start) * 1e6, dur = (time.end - time.start) * 1e6;
      if (t.kind == TaskKind::Compute) {
        event(fmt::format(
            R"({{"ph":"X","name":"{} step {}","cat":{},"pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f},)"
            R"("args":{{"task":{},"flops":{},"block_q":{},"block_k":{}}}}})",
            to_string(t.kernel), t.step, category, topology_.node_of(t.gpu), tid(t.gpu, compute_slot(t)), ts, dur,
            id, t.amount, t.block_q, t.block_k));
      } else {
        event(fmt::format(
            R"({{"ph":"X","name":"{} -> gpu {}","cat":{},"pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f},)"
            R"("args":{{"task":{},"bytes":{},"step":{},"channel":{},"dst":{}}}}})",
            to_string(t.payload), t.peer, category, topology_.node_of(t.gpu), tid(t.gpu, kLanes + lanes[id]), ts,
            dur, id, t.amount, t.step, static_cast<int>(t.stream), t.peer));
      }
    }
  }

  void counters(const TraceRun& run, double offset) {
    for (const LinkSample& s : run.result->link_samples) {
      event(fmt::format(R"({{"ph":"C","name":{},"pid":{},"ts":{:.3f},"args":{{"GB/s":{:.6g}}}}})",
                        link_name(s.link), topology_.nodes(), (offset + s.time) * 1e6,
                        s.bytes_per_second * 1e-9));
    }
  }

  const std::string& link_name(topo::LinkId link) {
    if (link_names_.empty()) link_names_.resize(static_cast<std::size_t>(topology_.link_count()));
    std::string& name = link_names_[static_cast<std::size_t>(link)];
    if (name.empty()) name = quoted(topology_.link_name(link));
    return name;
  }

  std::ostream& out_;
  const topo::Topology& topology_;
  std::vector<std::string> link_names_;  // quoted, filled on first use
  std::set<std::pair<int, int>> used_;    // (gpu, slot) threads that have events
  std::vector<std::vector<std::uint8_t>> lanes_;  // per run, per task: send lane
  bool first_ = true;
};

}  // namespace

void write_chrome_trace(std::ostream& out, const std::vector<TraceRun>& runs, const topo::Topology& topology) {
  TraceWriter(out, topology).write(runs);
}

void write_chrome_trace(std::ostream& out, const TaskGraph& graph, const SimResult& result,
                        const topo::Topology& topology) {
  write_chrome_trace(out, {TraceRun{"run", &graph, &result}}, topology);
}

}  // namespace burst::sim
