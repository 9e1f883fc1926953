// The event engine: discrete-event simulation of a task graph.
//
// Compute tasks run on their (GPU, stream) one at a time, in id order per stream, like kernels
// queued on a CUDA stream: a task starts when its dependencies are done and the previous task
// of its stream has ended. Overlap is not free: a task that starts while a transfer of its GPU
// (sent or received) is issued and not yet done runs ComputeModel::overlap_slowdown() times
// longer, since the communication kernels hold some of the GPU's multiprocessors. A task's
// duration is fixed when it starts, so a finishing task frees successors' transfers first and
// only then starts compute, and the hop issued at the start of a ring step slows that step. A transfer, once its
// dependencies are done, waits out the message latency of its path and then becomes a flow; flows share Shared links
// max-min fairly (FlowNetwork), so a hot link or a shared HCA slows everyone crossing it.
//
// Events (compute done, flow start, flows due) sit in one monotone priority queue (a radix
// heap, radix_queue.hpp). All events at the same instant are handled as one batch before the
// sharing is re-solved once: a ring step that starts 1024 transfers at the same time costs one
// solve per touched component, not 1024 global ones. Flow finish times change whenever rates
// do, so they stay in FlowNetwork's finish queue; the queue only holds a "flows due" event at
// the earliest of them. Past the queue, the loop is bound by cache misses on per-task state,
// hence the compact per-task record (Hot), in huge pages (huge_page_allocator.hpp) like the
// successor lists. Without EngineOptions::record_times no per-task times are kept at all.
#include <algorithm>
#include <limits>
#include <span>
#include <utility>

#include "common/progress.hpp"
#include "simulator/detail/engine/engines.hpp"
#include "simulator/detail/engine/flow_network.hpp"
#include "simulator/detail/engine/radix_queue.hpp"
#include "simulator/detail/engine/routes.hpp"

namespace burst::sim {
namespace {

// FlowsDue: the earliest flow finish time known when it was queued has come; the flows
// themselves wait in FlowNetwork's own finish queue.
enum class EventKind : std::int32_t { ComputeDone, FlowStart, FlowsDue };

struct Event {
  EventKind kind;
  TaskId task;  // ComputeDone, FlowStart
};

class Simulation {
 public:
  Simulation(const TaskGraph& graph, const topo::Topology& topology, const CostModels& models,
             const EngineOptions& options)
      : graph_(graph),
        routes_(graph, topology, *models.comm),
        network_(routes_, options.record_links),
        streams_(graph.streams()),
        record_times_(options.record_times),
        progress_("event simulation", static_cast<std::int64_t>(graph.size()), options.progress) {
    build_tasks(topology.gpu(), *models.compute);
    slowdown_ = models.compute->overlap_slowdown(topology.gpu());
    transfers_.assign(static_cast<std::size_t>(graph.gpus()), 0);
    if (record_times_) result_.times.resize(graph.size());
    result_.compute_busy_s.assign(static_cast<std::size_t>(graph.gpus()), 0.0);
    result_.link_bytes.assign(static_cast<std::size_t>(routes_.link_count()), 0.0);
  }

  SimResult run() {
    for (const TaskId id : roots_) make_ready(id, 0.0);
    while (!queue_.empty()) {
      const double now = queue_.top_time();
      do {
        handle(queue_.pop(), now);
      } while (queue_.more_now());
      network_.reshare(now, result_.link_samples);
      // One FlowsDue event per distinct earliest finish: later ones are queued when they
      // become the earliest.
      const double due = network_.next_finish();
      if (due < flows_due_) {
        flows_due_ = due;
        push(due, EventKind::FlowsDue, -1);
      }
    }
    progress_.finish();
    // A graph whose every task has a cause can only stall through a bug (a lowering that
    // waits on itself, a flow that never got a rate): fail loudly, never a short makespan.
    if (completed_ != static_cast<std::int64_t>(graph_.size())) {
      throw std::logic_error("event engine: " + std::to_string(graph_.size() - static_cast<std::size_t>(completed_)) +
                             " tasks never completed");
    }
    return std::move(result_);
  }

 private:
  // What the event loop needs of a task, in 32 bytes (a Task is 48, and its successors and
  // stream order would be two more arrays): events visit tasks in no particular order and the
  // loop is bound by cache misses, so all of it shares one cache line. Compute durations are
  // evaluated here, in one sequential pass.
  struct Hot {
    double value;             // compute: seconds; transfer: bytes (0 for a transfer to oneself)
    std::int32_t where;       // compute: stream slot (gpu x streams + stream) >= 0;
                              // transfer: -1 - route index
    std::int32_t pending;     // dependencies not yet done
    std::int32_t succ_first;  // successors: succ_[succ_first, succ_first + succ_count)
    std::int32_t succ_count;
    TaskId next_on_stream;  // compute: the next task of its stream, or -1
    std::int32_t unused;
    [[nodiscard]] bool compute() const { return where >= 0; }
    [[nodiscard]] std::int32_t route() const { return -1 - where; }
  };
  static_assert(sizeof(Hot) == 32);

  // Three passes, of which only the last touches the 32-byte records, writing each once in
  // order: successor counts into a dense array (dependencies point back a few thousand tasks
  // at most, so these increments hit the cache), an exclusive prefix sum over it, then the
  // records, each task filed as a successor of its dependencies at their cursors in that
  // array (so successor lists come out in id order). Tasks without dependencies are noted
  // for the start.
  void build_tasks(const topo::GpuSpec& gpu, const ComputeModel& compute) {
    const std::size_t n = graph_.size();
    const std::span<const Task> tasks = graph_.tasks();
    BigVector<std::int32_t> cursor;
    cursor.assign(n + 1, 0);
    for (const TaskId d : graph_.dependencies()) ++cursor[static_cast<std::size_t>(d)];
    std::int32_t total = 0;
    for (std::int32_t& c : cursor) total += std::exchange(c, total);
    succ_.resize(static_cast<std::size_t>(total));  // every entry written below
    hot_.reserve(n);
    const std::size_t stream_count = static_cast<std::size_t>(graph_.gpus()) * static_cast<std::size_t>(streams_);
    head_.assign(stream_count, -1);
    busy_.assign(stream_count, 0);
    std::vector<TaskId> tail(stream_count, -1);
    for (std::size_t id = 0; id < n; ++id) {
      const Task& t = tasks[id];
      const std::span<const TaskId> deps = graph_.deps(static_cast<TaskId>(id));
      for (const TaskId d : deps)
        succ_[static_cast<std::size_t>(cursor[static_cast<std::size_t>(d)]++)] = static_cast<TaskId>(id);
      if (deps.empty()) roots_.push_back(static_cast<TaskId>(id));
      Hot& h = hot_.emplace_back(
          Hot{0, 0, static_cast<std::int32_t>(deps.size()), cursor[id], cursor[id + 1] - cursor[id], -1, 0});
      if (t.kind == TaskKind::Compute) {
        h.value = compute.seconds(t, gpu);
        h.where = t.gpu * streams_ + t.stream;
        TaskId& last = tail[static_cast<std::size_t>(h.where)];
        (last < 0 ? head_[static_cast<std::size_t>(h.where)] : hot_[static_cast<std::size_t>(last)].next_on_stream) =
            static_cast<TaskId>(id);
        last = static_cast<TaskId>(id);
      } else {
        h.value = t.gpu == t.peer ? 0.0 : t.amount;
        h.where = -1 - routes_.index_of(static_cast<TaskId>(id));
      }
    }
  }

  void push(double time, EventKind kind, TaskId task) { queue_.push(time, Event{kind, task}); }

  void make_ready(TaskId id, double now) {
    const Hot& h = hot_[static_cast<std::size_t>(id)];
    if (h.compute()) {
      const auto s = static_cast<std::size_t>(h.where);
      if (!busy_[s] && head_[s] == id) start_compute(id, now);
      return;
    }
    if (record_times_) result_.times[static_cast<std::size_t>(id)].start = now;
    count_transfer(id, +1);
    push(now + routes_.route(h.route()).latency_s, EventKind::FlowStart, id);
  }

  void start_compute(TaskId id, double now) {
    const Hot& h = hot_[static_cast<std::size_t>(id)];
    busy_[static_cast<std::size_t>(h.where)] = 1;
    const auto gpu = static_cast<std::size_t>(h.where / streams_);
    const double seconds = transfers_[gpu] > 0 ? h.value * slowdown_ : h.value;
    if (record_times_) result_.times[static_cast<std::size_t>(id)] = {now, now + seconds};
    result_.compute_busy_s[gpu] += seconds;
    push(now + seconds, EventKind::ComputeDone, id);
  }

  // A transfer holds its two GPUs' communication kernels from issue to completion.
  void count_transfer(TaskId id, int delta) {
    const Task& t = graph_.task(id);
    if (t.gpu == t.peer) return;
    transfers_[static_cast<std::size_t>(graph_.stand_in(t.gpu))] += delta;
    transfers_[static_cast<std::size_t>(graph_.stand_in(t.peer))] += delta;
  }

  void complete(TaskId id, double now) {
    if (record_times_) result_.times[static_cast<std::size_t>(id)].end = now;
    result_.makespan_s = std::max(result_.makespan_s, now);
    const Hot& h = hot_[static_cast<std::size_t>(id)];
    if (!h.compute()) count_transfer(id, -1);
    TaskId next = -1;
    if (h.compute()) {
      const auto s = static_cast<std::size_t>(h.where);
      busy_[s] = 0;
      next = head_[s] = h.next_on_stream;
    }
    // Transfers first, so that the compute started at this instant sees them in flight.
    for (const bool transfers : {true, false}) {
      for (std::int32_t i = h.succ_first; i < h.succ_first + h.succ_count; ++i) {
        const TaskId s = succ_[static_cast<std::size_t>(i)];
        Hot& succ = hot_[static_cast<std::size_t>(s)];
        if (succ.compute() == transfers) continue;
        if (--succ.pending == 0) make_ready(s, now);
      }
    }
    if (next >= 0 && hot_[static_cast<std::size_t>(next)].pending == 0 &&
        !busy_[static_cast<std::size_t>(hot_[static_cast<std::size_t>(next)].where)]) {
      start_compute(next, now);
    }
    if ((++completed_ & 0xFFFF) == 0) progress_.update(completed_);
  }

  void handle(const Event& e, double now) {
    switch (e.kind) {
      case EventKind::ComputeDone: complete(e.task, now); break;
      case EventKind::FlowStart: {
        const Hot& h = hot_[static_cast<std::size_t>(e.task)];
        for (const topo::LinkId l : routes_.links(routes_.route(h.route()))) {
          result_.link_bytes[static_cast<std::size_t>(l)] += h.value;
        }
        if (h.value <= 0) {
          complete(e.task, now);
        } else {
          network_.add(e.task, h.route(), h.value, now);
        }
        break;
      }
      case EventKind::FlowsDue:
        if (now != flows_due_) break;  // superseded by an earlier one
        flows_due_ = std::numeric_limits<double>::infinity();
        for (TaskId task = network_.pop_finished(now); task >= 0; task = network_.pop_finished(now)) {
          complete(task, now);
        }
        break;
    }
  }

  const TaskGraph& graph_;
  Routes routes_;
  FlowNetwork network_;
  int streams_;
  bool record_times_;
  Progress progress_;
  SimResult result_;
  BigVector<Hot> hot_;
  BigVector<TaskId> succ_;
  std::vector<TaskId> roots_;  // tasks without dependencies, in id order
  std::vector<TaskId> head_;   // per stream slot: the next compute task to run, or -1
  std::vector<std::uint8_t> busy_;
  RadixQueue<Event> queue_;
  double flows_due_ = std::numeric_limits<double>::infinity();  // time of the live FlowsDue event
  double slowdown_ = 1;                                         // compute overlapped with the GPU's own transfers
  std::vector<std::int32_t> transfers_;                         // per GPU: transfers issued and not done
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
