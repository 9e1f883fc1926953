// When a ring folds onto one window, and which (ring_fold.hpp).
#include "simulator/detail/attention/ring_fold.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include <fmt/format.h>

namespace burst::sim {
namespace {

bool same_block(const PairTable& table, int q, int k, int q2, int k2) {
  if (table.at(q, k) != table.at(q2, k2)) return false;
  const BlockShape a = table.shape(q, k), b = table.shape(q2, k2);
  return a.rows == b.rows && a.columns == b.columns && a.masked == b.masked;
}

// A kernel's seconds by its pairs and shape, remembered: a ring's R^2 blocks come in a few
// shapes (a zigzag causal ring has three), so a handful of cost-model calls serve them all.
class KernelCosts {
 public:
  KernelCosts(const RingPass& pass, const std::function<double(const Task&)>& seconds)
      : pass_(pass), seconds_(seconds) {}
  double operator()(std::int64_t pairs, const BlockShape& shape) {
    for (const Seen& s : seen_) {
      if (s.pairs == pairs && s.rows == shape.rows && s.columns == shape.columns && s.masked == shape.masked)
        return s.value;
    }
    const TaskGraph::ComputeSpec spec = block_compute(pass_, pairs, shape, false);
    const double value = seconds_ ? seconds_(TaskGraph::compute_task(spec)) : spec.flops;
    if (seen_.size() < kRemembered) seen_.push_back({pairs, shape.rows, shape.columns, shape.masked, value});
    return value;
  }

 private:
  static constexpr std::size_t kRemembered = 16;
  struct Seen {
    std::int64_t pairs, rows, columns;
    bool masked;
    double value;
  };
  const RingPass& pass_;
  const std::function<double(const Task&)>& seconds_;
  std::vector<Seen> seen_;
};

}  // namespace

FoldChoice fold_window(const RingGeometry& g, const PairTable& table, const World& world,
                       std::span<const RingPass* const> passes,
                       const std::function<double(const Task&)>& block_seconds) {
  FoldChoice choice;
  const int per_node = ring_ranks_per_node(g.ulysses, world);
  // A shift by the window must map the schedule onto itself: whole inner rings when there is an
  // outer one.
  const int size = g.outer == 1 ? per_node : std::lcm(per_node, g.inner);
  if (size >= g.ring) return choice;  // one window: nothing to fold
  if (g.ring % size != 0) {
    choice.why_not =
        fmt::format("the ring of {} ranks is not whole windows of {} (whole nodes and inner rings)", g.ring, size);
    return choice;
  }
  const int r = g.ring;
  for (int q = 0; q < r; ++q) {
    for (int k = 0; k < r; ++k) {
      if (table.at(q, k) == 0) {
        choice.why_not = fmt::format(
            "the mask gives ring rank {} nothing to compute with rank {}'s block, so blocks stop early and ranks "
            "differ in the hops they make",
            q, k);
        return choice;
      }
      choice.exact = choice.exact && same_block(table, q, k, (q + size) % r, (k + size) % r);
    }
  }
  choice.windows.assign(passes.size(), RingWindow{.first = 0, .size = size});
  if (choice.exact) return choice;
  // Each rank's compute time in each pass; a block's kernel runs on the rank holding the keys
  // when queries travel, on the rank holding the queries otherwise.
  for (std::size_t x = 0; x < passes.size(); ++x) {
    const RingPass* pass = passes[x];
    KernelCosts costs(*pass, block_seconds);
    std::vector<double> pass_busy(static_cast<std::size_t>(r), 0.0);
    for (int q = 0; q < r; ++q) {
      for (int k = 0; k < r; ++k) {
        pass_busy[static_cast<std::size_t>(pass->queries_travel ? k : q)] += costs(table.at(q, k), table.shape(q, k));
      }
    }
    const auto top = std::max_element(pass_busy.begin(), pass_busy.end());
    const double mean = std::accumulate(pass_busy.begin(), pass_busy.end(), 0.0) / r;
    choice.imbalance.push_back(mean > 0 ? *top / mean : 1.0);
    choice.windows[x].first = static_cast<int>(top - pass_busy.begin()) / size * size;
  }
  return choice;
}

}  // namespace burst::sim
