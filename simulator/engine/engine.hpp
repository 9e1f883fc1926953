// Engines schedule a task graph on a topology under cost models, chosen by name:
//   "event"    discrete-event simulation; concurrent transfers share links max-min fairly
//              (SimGrid's flow model), so a shared HCA or a hot link shows up as contention.
//   "analytic" one pass in topological order, each transfer at its uncontended path speed;
//              exact where links are uncontended, and much faster (for search).
// A compute stream runs one task at a time, in the order tasks were added for that stream.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/cost_model.hpp"
#include "simulator/task_graph.hpp"
#include "topologies/topology.hpp"

namespace burst::sim {

struct TaskTime {
  double start = 0;  // transfers: when the message left (latency included in [start, end])
  double end = 0;
};

// One change of a link's used bandwidth, recorded when EngineOptions::record_links is set.
struct LinkSample {
  topo::LinkId link;
  double time;
  double bytes_per_second;
};

struct SimResult {
  double makespan_s = 0;
  std::vector<TaskTime> times;           // per task; empty without record_times
  std::vector<double> compute_busy_s;    // per GPU: time its compute streams were busy
  std::vector<double> link_bytes;        // per LinkId: bytes that crossed it
  std::vector<LinkSample> link_samples;  // only with record_links
};

struct EngineOptions {
  bool record_links = false;  // keep link utilisation over time (for traces)
  bool progress = false;      // report progress on stderr for long runs
  // Keep every task's start and end (for traces and checks). Without it a run only fills the
  // makespan, busy times and link bytes, and saves 16 bytes per task (80 MB for a 5M-task
  // layer) of memory traffic.
  bool record_times = true;
};

class Engine {
 public:
  virtual ~Engine() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  [[nodiscard]] virtual SimResult run(const TaskGraph& graph, const topo::Topology& topology, const CostModels& models,
                                      const EngineOptions& options) const = 0;
};

// "event" or "analytic"; throws burst::Error listing the valid names otherwise.
[[nodiscard]] std::unique_ptr<Engine> make_engine(std::string_view name);
[[nodiscard]] std::vector<std::string> engine_names();

}  // namespace burst::sim
