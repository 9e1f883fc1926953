#include "simulator/engine/routes.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

namespace burst::sim {

Routes::Routes(const TaskGraph& graph, const topo::Topology& topology, const CommModel& comm) {
  const int links = topology.link_count();
  capacity_.resize(static_cast<std::size_t>(links));
  std::vector<bool> fatpipe(static_cast<std::size_t>(links));
  for (topo::LinkId l = 0; l < links; ++l) {
    const topo::DirectedLink link = topology.link(l);
    capacity_[static_cast<std::size_t>(l)] = comm.capacity(link);
    fatpipe[static_cast<std::size_t>(l)] = link.sharing == topo::Sharing::FatPipe;
  }

  constexpr double inf = std::numeric_limits<double>::infinity();
  const auto gpus = static_cast<std::int64_t>(graph.gpus());
  std::unordered_map<std::int64_t, std::int32_t> by_pair;
  std::vector<topo::LinkId> scratch;
  task_route_.assign(graph.size(), -1);
  std::int64_t last_key = -1;
  std::int32_t last_index = -1;
  if (graph.gpus() > topology.gpu_count()) {
    throw std::invalid_argument(fmt::format("task graph for {} GPUs on topology '{}' of {} GPUs", graph.gpus(),
                                            topology.name(), topology.gpu_count()));
  }
  for (std::size_t id = 0; id < graph.size(); ++id) {
    const Task& t = graph.tasks()[id];
    // A lowering's mistake, not user input: fail loudly instead of indexing out of bounds.
    if (t.gpu < 0 || t.gpu >= graph.gpus() || t.peer < 0 || t.peer >= graph.gpus()) {
      throw std::invalid_argument(fmt::format("task {} names GPU {} -> {} outside 0..{}", id, t.gpu, t.peer,
                                              graph.gpus() - 1));
    }
    if (t.kind != TaskKind::Transfer) continue;
    const std::int64_t key = t.gpu * gpus + t.peer;
    if (key != last_key) {
      auto [it, inserted] = by_pair.try_emplace(key, static_cast<std::int32_t>(routes_.size()));
      if (inserted) {
        Route r;
        r.first = static_cast<std::int32_t>(links_.size());
        r.shared_first = static_cast<std::int32_t>(shared_.size());
        r.bottleneck_Bps = inf;
        r.fatpipe_Bps = inf;
        if (t.gpu != t.peer) {
          scratch.clear();
          topology.route(t.gpu, t.peer, scratch);
          r.latency_s = comm.latency(topology.path(t.gpu, t.peer));
          for (const topo::LinkId l : scratch) {
            const double cap = capacity_[static_cast<std::size_t>(l)];
            links_.push_back(l);
            r.bottleneck_Bps = std::min(r.bottleneck_Bps, cap);
            if (fatpipe[static_cast<std::size_t>(l)]) {
              r.fatpipe_Bps = std::min(r.fatpipe_Bps, cap);
            } else {
              shared_.push_back(l);
            }
          }
        }
        r.count = static_cast<std::int32_t>(links_.size()) - r.first;
        r.shared_count = static_cast<std::int32_t>(shared_.size()) - r.shared_first;
        max_shared_ = std::max(max_shared_, static_cast<int>(r.shared_count));
        routes_.push_back(r);
      }
      last_key = key;
      last_index = it->second;
    }
    task_route_[id] = last_index;
  }
}

}  // namespace burst::sim
