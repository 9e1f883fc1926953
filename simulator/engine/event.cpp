// The event engine: discrete-event simulation of a task graph.
//
// Compute tasks run on their (GPU, stream) one at a time, in id order per stream, like kernels
// queued on a CUDA stream: a task starts when its dependencies are done and the previous task
// of its stream has ended. A transfer, once its dependencies are done, waits out the message
// latency of its path and then becomes a flow; flows share Shared links max-min fairly
// (FlowNetwork), so a hot link or a shared HCA slows everyone crossing it.
//
// Events (compute done, flow start, flow done) sit in one binary heap ordered by (time,
// sequence number), so runs are deterministic. All events at the same instant are handled as
// one batch before the sharing is re-solved once: a ring step that starts 1024 transfers at
// the same time costs one solve per touched component, not 1024 global ones. A flow-done event
// carries the flow's version; a rate change bumps it, so superseded events are dropped when
// popped instead of being searched for in the heap.
#include <algorithm>
#include <queue>

#include "common/progress.hpp"
#include "simulator/engine/engines.hpp"
#include "simulator/engine/flow_network.hpp"
#include "simulator/engine/routes.hpp"

namespace burst::sim {
namespace {

enum class EventKind : std::uint8_t { ComputeDone, FlowStart, FlowDone };

struct Event {
  double time;
  std::uint64_t seq;
  std::int32_t target;   // task (ComputeDone, FlowStart) or flow slot (FlowDone)
  std::uint32_t version; // FlowDone only
  EventKind kind;
};

struct Later {
  bool operator()(const Event& a, const Event& b) const {
    return a.time > b.time || (a.time == b.time && a.seq > b.seq);
  }
};

class Simulation {
 public:
  Simulation(const TaskGraph& graph, const topo::Topology& topology, const CostModels& models,
             const EngineOptions& options)
      : graph_(graph),
        gpu_(topology.gpu()),
        models_(models),
        routes_(graph, topology, *models.comm),
        network_(routes_, options.record_links),
        streams_(streams_per_gpu(graph)),
        progress_("event simulation", static_cast<std::int64_t>(graph.size()), options.progress) {
    build_successors();
    build_streams();
    result_.times.resize(graph.size());
    result_.compute_busy_s.assign(static_cast<std::size_t>(graph.gpus()), 0.0);
    result_.link_bytes.assign(static_cast<std::size_t>(routes_.link_count()), 0.0);
    std::vector<Event> storage;
    storage.reserve(1024);
    heap_ = std::priority_queue<Event, std::vector<Event>, Later>(Later{}, std::move(storage));
  }

  SimResult run() {
    for (std::size_t id = 0; id < graph_.size(); ++id) {
      if (pending_[id] == 0) make_ready(static_cast<TaskId>(id), 0.0);
    }
    auto schedule = [this](std::int32_t slot, double finish, std::uint32_t version) {
      push(finish, EventKind::FlowDone, slot, version);
    };
    while (!heap_.empty()) {
      const double now = heap_.top().time;
      while (!heap_.empty() && heap_.top().time == now) {
        const Event e = heap_.top();
        heap_.pop();
        handle(e, now);
      }
      network_.reshare(now, schedule, result_.link_samples);
    }
    progress_.finish();
    return std::move(result_);
  }

 private:
  void build_successors() {
    const std::size_t n = graph_.size();
    pending_.resize(n);
    succ_begin_.assign(n + 1, 0);
    for (std::size_t id = 0; id < n; ++id) {
      const auto deps = graph_.deps(static_cast<TaskId>(id));
      pending_[id] = static_cast<std::int32_t>(deps.size());
      for (const TaskId d : deps) ++succ_begin_[static_cast<std::size_t>(d) + 1];
    }
    for (std::size_t i = 0; i < n; ++i) succ_begin_[i + 1] += succ_begin_[i];
    succ_.resize(succ_begin_[n]);
    std::vector<std::int64_t> fill(succ_begin_.begin(), succ_begin_.end() - 1);
    for (std::size_t id = 0; id < n; ++id) {
      for (const TaskId d : graph_.deps(static_cast<TaskId>(id))) {
        succ_[static_cast<std::size_t>(fill[static_cast<std::size_t>(d)]++)] = static_cast<TaskId>(id);
      }
    }
  }

  // Per (GPU, stream): its compute tasks in id order, and a cursor at the next one to run.
  void build_streams() {
    const std::size_t count = static_cast<std::size_t>(graph_.gpus()) * static_cast<std::size_t>(streams_);
    stream_begin_.assign(count + 1, 0);
    for (const Task& t : graph_.tasks()) {
      if (t.kind == TaskKind::Compute) ++stream_begin_[stream_of(t) + 1];
    }
    for (std::size_t i = 0; i < count; ++i) stream_begin_[i + 1] += stream_begin_[i];
    stream_tasks_.resize(stream_begin_[count]);
    cursor_.assign(stream_begin_.begin(), stream_begin_.end() - 1);
    std::vector<std::int64_t> fill = cursor_;
    for (std::size_t id = 0; id < graph_.size(); ++id) {
      const Task& t = graph_.tasks()[id];
      if (t.kind == TaskKind::Compute) stream_tasks_[static_cast<std::size_t>(fill[stream_of(t)]++)] = static_cast<TaskId>(id);
    }
    busy_.assign(count, 0);
  }

  [[nodiscard]] std::size_t stream_of(const Task& t) const {
    return static_cast<std::size_t>(t.gpu) * static_cast<std::size_t>(streams_) + t.stream;
  }

  void push(double time, EventKind kind, std::int32_t target, std::uint32_t version = 0) {
    heap_.push(Event{time, seq_++, target, version, kind});
  }

  void make_ready(TaskId id, double now) {
    const Task& t = graph_.task(id);
    if (t.kind == TaskKind::Compute) {
      const std::size_t s = stream_of(t);
      if (!busy_[s] && stream_tasks_[static_cast<std::size_t>(cursor_[s])] == id) start_compute(id, s, now);
      return;
    }
    result_.times[static_cast<std::size_t>(id)].start = now;
    push(now + routes_.of(id).latency_s, EventKind::FlowStart, id);
  }

  void start_compute(TaskId id, std::size_t stream, double now) {
    const Task& t = graph_.task(id);
    const double seconds = models_.compute->seconds(t, gpu_);
    busy_[stream] = 1;
    result_.times[static_cast<std::size_t>(id)] = {now, now + seconds};
    result_.compute_busy_s[static_cast<std::size_t>(t.gpu)] += seconds;
    push(now + seconds, EventKind::ComputeDone, id);
  }

  void complete(TaskId id, double now) {
    result_.times[static_cast<std::size_t>(id)].end = now;
    result_.makespan_s = std::max(result_.makespan_s, now);
    const Task& t = graph_.task(id);
    if (t.kind == TaskKind::Compute) {
      const std::size_t s = stream_of(t);
      busy_[s] = 0;
      ++cursor_[s];
      if (cursor_[s] < stream_begin_[s + 1]) {
        const TaskId next = stream_tasks_[static_cast<std::size_t>(cursor_[s])];
        if (pending_[static_cast<std::size_t>(next)] == 0) start_compute(next, s, now);
      }
    }
    for (std::int64_t i = succ_begin_[static_cast<std::size_t>(id)]; i < succ_begin_[static_cast<std::size_t>(id) + 1]; ++i) {
      const TaskId s = succ_[static_cast<std::size_t>(i)];
      if (--pending_[static_cast<std::size_t>(s)] == 0) make_ready(s, now);
    }
    if ((++completed_ & 0xFFFF) == 0) progress_.update(completed_);
  }

  void handle(const Event& e, double now) {
    switch (e.kind) {
      case EventKind::ComputeDone:
        complete(e.target, now);
        break;
      case EventKind::FlowStart: {
        const Task& t = graph_.task(e.target);
        const std::int32_t route = routes_.index_of(e.target);
        for (const topo::LinkId l : routes_.links(routes_.route(route))) {
          result_.link_bytes[static_cast<std::size_t>(l)] += t.amount;
        }
        if (t.amount <= 0 || t.gpu == t.peer) {
          complete(e.target, now);
        } else {
          network_.add(e.target, route, t.amount, now);
        }
        break;
      }
      case EventKind::FlowDone:
        if (network_.current(e.target, e.version)) {
          const TaskId task = network_.task(e.target);
          network_.remove(e.target);
          complete(task, now);
        }
        break;
    }
  }

  const TaskGraph& graph_;
  const topo::GpuSpec& gpu_;
  const CostModels& models_;
  Routes routes_;
  FlowNetwork network_;
  int streams_;
  Progress progress_;
  SimResult result_;
  std::vector<std::int32_t> pending_;
  std::vector<std::int64_t> succ_begin_;
  std::vector<TaskId> succ_;
  std::vector<std::int64_t> stream_begin_, cursor_;
  std::vector<TaskId> stream_tasks_;
  std::vector<std::uint8_t> busy_;
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t seq_ = 0;
  std::int64_t completed_ = 0;
};

class EventEngine final : public Engine {
 public:
  [[nodiscard]] std::string name() const override { return "event"; }
  [[nodiscard]] SimResult run(const TaskGraph& graph, const topo::Topology& topology, const CostModels& models,
                              const EngineOptions& options) const override {
    return Simulation(graph, topology, models, options).run();
  }
};

}  // namespace

std::unique_ptr<Engine> make_event_engine() { return std::make_unique<EventEngine>(); }

}  // namespace burst::sim
