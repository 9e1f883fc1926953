// Simulating one attention layer (forward and backward) under one strategy, and the figures
// a person reads off it: time per phase, the communication left exposed (not hidden behind
// compute), bytes per rank by link class, and compute imbalance across ranks.
//
// Bytes are counted two ways: by the path class of each transfer's (source, destination)
// pair (what a rank sends, and how far), and by the kind of every link a byte crosses (a byte
// from a GPU to a NIC over PCIe and on over IB counts once for each), which shows the load
// each kind of link carries.
// exposed_comm_s = phase time - the largest compute busy time of any rank: the time the
// slowest-computing rank still spends waiting on data. imbalance = max / mean busy time.
// Under tensor or data parallelism the layer runs as several copies side by side; where no link
// tells them apart one copy is simulated for all (simulator/detail/attention/copies.hpp), with the
// same figures. A long ring on alike nodes is folded onto one window of whole nodes
// (simulator/detail/attention/ring_fold.hpp): compute figures are then the window's ranks', bytes
// the window's times the windows.
#pragma once

#include <array>
#include <string>

#include "common/json_reader.hpp"
#include "simulator/attention/attention.hpp"
#include "simulator/cost_model.hpp"
#include "simulator/engine/engine.hpp"

namespace burst::sim {

struct PhaseFigures {
  double time_s = 0;
  double compute_max_s = 0;  // busiest rank's compute time
  double exposed_comm_s = 0;
  double imbalance = 1;  // max / mean compute time over ranks
  double flops_total = 0;
  double bytes_per_rank = 0;  // mean over ranks of bytes sent
  double bytes_per_rank_max = 0;
  std::array<double, topo::kPathClassCount> bytes_per_rank_by_class{};  // mean bytes sent per rank, by path class
  std::array<double, topo::kLinkKindCount> link_bytes_per_rank{};       // bytes crossing links of each kind / ranks
  std::size_t tasks = 0;
};

struct LayerSimulation {
  AttentionStrategy strategy;
  std::string not_applicable;  // non-empty: the strategy cannot run here, and why
  PhaseFigures forward, backward;
  // The layer's copies (tensor-parallel ranks x data-parallel replicas) and how many were
  // simulated: 1 where one stands for all (attention/copies.hpp), else every one, and why.
  int copies = 1;
  int copies_simulated = 1;
  std::string copies_note;
  // Each copy's ring folded onto one of `ring_windows` windows of whole nodes (1: not folded;
  // attention/ring_fold.hpp); exact: every window does the same work at every step, so only the
  // links, found alike, could tell them apart. ring_note: why the ring was not folded.
  int ring_windows = 1;
  bool ring_fold_exact = true;
  std::string ring_note;
};

struct LayerSimOptions {
  std::string engine = "event";
  CostModels models;  // make_cost_models() when empty
  bool progress = false;
  // Simulate one copy where the copies are equivalent (the figures are the same; false checks it).
  bool reduce_copies = true;
  // Simulate one window of a long ring where the windows are alike (ring_fold.hpp; false: every rank).
  bool fold_rings = true;
};

// A phase graph and the engine's result, kept when the caller wants a trace.
struct PhaseRun {
  TaskGraph graph{0};
  SimResult result;
};
struct LayerRuns {
  PhaseRun forward, backward;
};

// Never throws for a strategy that does not apply: returns it with not_applicable set.
// Fills `runs` (when given) with the graphs and engine results, for traces.
[[nodiscard]] LayerSimulation simulate_attention_layer(const AttentionShape& shape, const Mask& mask,
                                                       const AttentionStrategy& strategy,
                                                       const topo::Topology& topology, const LayerSimOptions& options,
                                                       LayerRuns* runs = nullptr);

[[nodiscard]] Json to_json(const LayerSimulation& sim);

}  // namespace burst::sim
