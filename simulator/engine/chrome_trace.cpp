// Writes the trace directly with fmt (a 1024-GPU layer has millions of events; building a
// JSON tree first would triple the memory). Strings are escaped by nlohmann's serializer.
#include "simulator/engine/chrome_trace.hpp"

#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace burst::sim {
namespace {

constexpr int kThreadsPerGpu = 64;  // tid = local GPU * 64 + stream; the send thread is the last

std::string quoted(const std::string& text) { return nlohmann::json(text).dump(); }

class TraceWriter {
 public:
  TraceWriter(std::ostream& out, const topo::Topology& topology) : out_(out), topology_(topology) {}

  void write(const std::vector<TraceRun>& runs) {
    out_ << "{\"traceEvents\":[\n";
    metadata(runs);
    double offset = 0;
    for (const TraceRun& run : runs) {
      tasks(run, offset);
      counters(run, offset);
      offset += run.result->makespan_s;
    }
    out_ << "\n],\"displayTimeUnit\":\"ns\"}\n";
  }

 private:
  void event(const std::string& json) {
    if (!first_) out_ << ",\n";
    first_ = false;
    out_ << json;
  }

  [[nodiscard]] int tid(int gpu, int stream) const { return topology_.local_of(gpu) * kThreadsPerGpu + stream; }

  void metadata(const std::vector<TraceRun>& runs) {
    std::set<std::pair<int, int>> threads;  // (gpu, stream); stream kThreadsPerGpu - 1 = send
    for (const TraceRun& run : runs) {
      for (const Task& t : run.graph->tasks()) {
        threads.insert({t.gpu, t.kind == TaskKind::Compute ? static_cast<int>(t.stream) : kThreadsPerGpu - 1});
      }
    }
    for (int node = 0; node < topology_.nodes(); ++node) {
      event(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"node {}"}}}})", node,
                        node));
      event(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
                        node, node));
    }
    for (const auto& [gpu, stream] : threads) {
      const int local = topology_.local_of(gpu);
      const std::string name = stream == kThreadsPerGpu - 1 ? fmt::format("gpu {} send", local)
                                                            : fmt::format("gpu {} stream {}", local, stream);
      event(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})",
                        topology_.node_of(gpu), tid(gpu, stream), quoted(name)));
      event(fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
                        topology_.node_of(gpu), tid(gpu, stream), tid(gpu, stream)));
    }
    event(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"links"}}}})",
                      topology_.nodes()));
  }

  void tasks(const TraceRun& run, double offset) {
    const std::string category = quoted(run.name);
    for (std::size_t id = 0; id < run.graph->size(); ++id) {
      const Task& t = run.graph->tasks()[id];
      const TaskTime& time = run.result->times[id];
      const double ts = (offset + time.start) * 1e6, dur = (time.end - time.start) * 1e6;
      if (t.kind == TaskKind::Compute) {
        event(fmt::format(
            R"({{"ph":"X","name":"{} step {}","cat":{},"pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f},)"
            R"("args":{{"task":{},"flops":{},"block_q":{},"block_k":{}}}}})",
            to_string(t.kernel), t.step, category, topology_.node_of(t.gpu), tid(t.gpu, t.stream), ts, dur, id,
            t.amount, t.block_q, t.block_k));
      } else {
        event(fmt::format(
            R"({{"ph":"X","name":"{} -> gpu {}","cat":{},"pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f},)"
            R"("args":{{"task":{},"bytes":{},"step":{},"channel":{},"dst":{}}}}})",
            to_string(t.payload), t.peer, category, topology_.node_of(t.gpu), tid(t.gpu, kThreadsPerGpu - 1), ts,
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
