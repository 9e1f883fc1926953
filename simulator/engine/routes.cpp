#include "simulator/detail/engine/routes.hpp"

#include <algorithm>
#include <limits>
#include <span>
#include <stdexcept>

#include <fmt/format.h>

namespace burst::sim {

namespace {

// (src, dst) pair -> route index: open addressing with linear probing. A few thousand pairs
// against millions of lookups; std::unordered_map's node per entry made them cache misses.
class PairIndex {
 public:
  PairIndex() : slots_(1024, Slot{-1, 0}) {}

  // The index stored for `key`, or `fresh` (stored for it) when the key is new.
  std::int32_t find_or_add(std::int64_t key, std::int32_t fresh) {
    std::size_t i = home(key);
    for (; slots_[i].key >= 0; i = (i + 1) & mask()) {
      if (slots_[i].key == key) return slots_[i].index;
    }
    slots_[i] = {key, fresh};
    if (++used_ * 2 > slots_.size()) grow();
    return fresh;
  }

 private:
  struct Slot {
    std::int64_t key;  // -1: empty
    std::int32_t index;
  };
  [[nodiscard]] std::size_t mask() const { return slots_.size() - 1; }
  [[nodiscard]] std::size_t home(std::int64_t key) const {
    return static_cast<std::size_t>((static_cast<std::uint64_t>(key) * 0x9E3779B97F4A7C15ull) >> 32) & mask();
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2, Slot{-1, 0});
    old.swap(slots_);
    for (const Slot& s : old) {
      if (s.key < 0) continue;
      std::size_t i = home(s.key);
      while (slots_[i].key >= 0) i = (i + 1) & mask();
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  std::size_t used_ = 0;
};

}  // namespace

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
  PairIndex by_pair;
  std::int64_t last_key = -1;
  std::int32_t last_index = -1;
  std::vector<topo::LinkId> scratch;
  task_route_.resize(graph.size());  // every entry written below
  if (graph.gpus() > topology.gpu_count()) {
    throw std::invalid_argument(fmt::format("task graph for {} GPUs on topology '{}' of {} GPUs", graph.gpus(),
                                            topology.name(), topology.gpu_count()));
  }
  const std::span<const Task> tasks = graph.tasks();
  for (std::size_t id = 0; id < tasks.size(); ++id) {
    const Task& t = tasks[id];
    // A lowering's mistake, not user input: fail loudly instead of indexing out of bounds.
    if (t.gpu < 0 || t.gpu >= graph.gpus() || t.peer < 0 || t.peer >= graph.gpus()) {
      throw std::invalid_argument(
          fmt::format("task {} names GPU {} -> {} outside 0..{}", id, t.gpu, t.peer, graph.gpus() - 1));
    }
    if (t.kind != TaskKind::Transfer) {
      task_route_[id] = -1;
      continue;
    }
    const std::int64_t key = t.gpu * gpus + t.peer;
    if (key == last_key) {
      task_route_[id] = last_index;
      continue;
    }
    const std::int32_t index = by_pair.find_or_add(key, static_cast<std::int32_t>(routes_.size()));
    if (index == static_cast<std::int32_t>(routes_.size())) {
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
    task_route_[id] = index;
    last_key = key;
    last_index = index;
  }
}

}  // namespace burst::sim
