// Every transfer's route, resolved once before an engine runs: the directed links it crosses,
// the usable capacity of each link under the comm model, the message latency and the
// uncontended bottleneck. A 1024-GPU layer has millions of transfers but only a few thousand
// distinct (src, dst) pairs, so routes are computed per pair (found by a flat hash table) and
// shared.
//
// A transfer from a GPU to itself crosses no link and takes no time. The constructor also
// checks that every task names GPUs of the graph, and the graph fits the topology
// (std::invalid_argument otherwise: that is a lowering's bug, not bad user input).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "simulator/cost_model.hpp"
#include "simulator/task_graph.hpp"
#include "topologies/topology.hpp"

namespace burst::sim {

struct Route {
  std::int32_t first = 0, count = 0;                // all links, in links()
  std::int32_t shared_first = 0, shared_count = 0;  // the Shared ones, in shared_links()
  double latency_s = 0;
  double bottleneck_Bps = 0;  // min capacity over all links (infinity for an empty route)
  double fatpipe_Bps = 0;     // min capacity over the FatPipe links (infinity if none)
};

class Routes {
 public:
  Routes(const TaskGraph& graph, const topo::Topology& topology, const CommModel& comm);

  // The route of transfer task `id` (undefined for compute tasks).
  [[nodiscard]] const Route& of(TaskId id) const { return routes_[static_cast<std::size_t>(task_route_[id])]; }
  [[nodiscard]] std::int32_t index_of(TaskId id) const { return task_route_[static_cast<std::size_t>(id)]; }
  [[nodiscard]] const Route& route(std::int32_t index) const { return routes_[static_cast<std::size_t>(index)]; }
  [[nodiscard]] std::span<const topo::LinkId> links(const Route& r) const {
    return {links_.data() + r.first, static_cast<std::size_t>(r.count)};
  }
  [[nodiscard]] std::span<const topo::LinkId> shared_links(const Route& r) const {
    return {shared_.data() + r.shared_first, static_cast<std::size_t>(r.shared_count)};
  }
  [[nodiscard]] double capacity(topo::LinkId link) const { return capacity_[static_cast<std::size_t>(link)]; }
  [[nodiscard]] int link_count() const { return static_cast<int>(capacity_.size()); }
  [[nodiscard]] int max_shared_per_route() const { return max_shared_; }

 private:
  BigVector<std::int32_t> task_route_;  // per task; -1 for compute
  std::vector<Route> routes_;
  std::vector<topo::LinkId> links_, shared_;
  std::vector<double> capacity_;  // per LinkId
  int max_shared_ = 0;
};

}  // namespace burst::sim
