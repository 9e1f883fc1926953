#include "simulator/layer_simulation.hpp"

#include <algorithm>
#include <functional>
#include <numeric>

#include <fmt/format.h>

#include "simulator/detail/attention/copies.hpp"
#include "simulator/attention/lowering.hpp"
#include "simulator/attention/ring.hpp"

namespace burst::sim {
namespace {

// Which GPUs a phase graph computed on and what it stands for: all GPUs once, or some standing
// for `copies` identical copies of the layer (attention/copies.hpp), each a ring folded onto one
// of `windows` windows (attention/ring_fold.hpp).
struct Sample {
  std::vector<int> gpus;  // empty: every GPU of the topology
  double copies = 1;
  double windows = 1;
};

PhaseFigures figures(const TaskGraph& graph, const SimResult& result, const std::vector<double>& flops,
                     const topo::Topology& topology, const Sample& sample) {
  PhaseFigures f;
  const auto ranks = static_cast<std::size_t>(topology.gpu_count());
  f.tasks = graph.size();
  f.time_s = result.makespan_s;
  f.flops_total = sample.copies * std::accumulate(flops.begin(), flops.end(), 0.0);
  std::vector<double> busy;
  if (sample.gpus.empty()) {
    busy = result.compute_busy_s;
  } else {
    for (const int g : sample.gpus) busy.push_back(result.compute_busy_s[static_cast<std::size_t>(g)]);
  }
  if (!busy.empty()) {
    f.compute_max_s = *std::max_element(busy.begin(), busy.end());
    const double mean = std::accumulate(busy.begin(), busy.end(), 0.0) / static_cast<double>(busy.size());
    f.imbalance = mean > 0 ? f.compute_max_s / mean : 1.0;
  }
  f.exposed_comm_s = std::max(0.0, f.time_s - f.compute_max_s);

  // A folded graph holds the transfers into its window: what a window rank receives, it sends.
  const bool folded = sample.windows > 1;
  std::vector<double> sent(ranks, 0.0);
  for (const Task& t : graph.tasks()) {
    if (t.kind != TaskKind::Transfer) continue;
    sent[static_cast<std::size_t>(folded ? t.peer : t.gpu)] += t.amount;
    const auto cls = static_cast<std::size_t>(topology.path(t.gpu, t.peer).cls);
    f.bytes_per_rank_by_class[cls] += t.amount;
  }
  // Totals over every copy and window, shared by every GPU.
  const double share = sample.copies * sample.windows / static_cast<double>(ranks);
  f.bytes_per_rank = std::accumulate(sent.begin(), sent.end(), 0.0) * share;
  f.bytes_per_rank_max = sent.empty() ? 0.0 : *std::max_element(sent.begin(), sent.end());
  for (double& b : f.bytes_per_rank_by_class) b *= share;
  for (std::size_t id = 0; id < result.link_bytes.size(); ++id) {
    const auto kind = static_cast<std::size_t>(topology.link(static_cast<topo::LinkId>(id)).kind);
    f.link_bytes_per_rank[kind] += result.link_bytes[id] * share;
  }
  return f;
}

// The phase graphs to simulate and what they stand for: the whole layer, or one copy of it
// where copies_not_equivalent() finds nothing that tells the copies apart; each copy's ring
// folded onto one window where the windows are alike (ring_fold.hpp).
struct Lowering {
  LoweredAttention graphs;
  Sample forward, backward;
  int copies = 1;
  bool copies_reduced = false;
  std::string reason;       // why every copy is simulated ("" when one stands for all, or there is one)
  std::string fold_reason;  // why the ring is not folded ("" when it is, or folding was not asked)
};

// The copy-0 GPUs of window `window` of a folded ring: rank r's place shifted by whole windows.
std::function<int(int rank, int window)> window_gpus(const RingFold& fold, const AttentionShape& shape,
                                                     const World& world) {
  const auto gpu_of = copy_gpus(shape, world);
  const int ranks = world.size(), shift = fold.size;
  return [gpu_of, ranks, shift](int rank, int window) { return gpu_of((rank + window * shift) % ranks, 0); };
}

Lowering lower(const AttentionShape& shape, const Mask& mask, const AttentionStrategy& strategy,
               const topo::Topology& topology, bool reduce, bool fold, const CostModels& models) {
  const int copies = shape.tensor_parallel * shape.data_parallel;
  // One copy is lowered once, and placed as often as the simulation needs it.
  const World world = attention_world(shape, topology);
  FoldOptions folding{.fold = fold, .block_seconds = {}};
  if (fold) {
    folding.block_seconds = [&models, &topology](const Task& t) { return models.compute->seconds(t, topology.gpu()); };
  }
  LoweredAttention one = lower_attention(shape, mask, strategy, world, folding);
  std::string fold_reason = one.fold.why_not;
  if (one.fold.windows > 1) {
    fold_reason =
        placements_not_equivalent(one, one.fold.windows, window_gpus(one.fold, shape, world), topology, "window");
    if (!fold_reason.empty()) one = lower_attention(shape, mask, strategy, world);
  }
  std::string reason = reduce && copies > 1 ? copies_not_equivalent(one, shape, world, topology) : "";
  const bool reduced = copies > 1 && reduce && reason.empty();
  const int placed = reduced ? 1 : copies;
  const auto gpu_of = copy_gpus(shape, world);
  const auto sample = [&](int first) {
    Sample s;
    s.copies = reduced ? copies : 1;
    s.windows = one.fold.windows;
    if (one.fold.windows > 1 || reduced) {
      const int size = one.fold.windows > 1 ? one.fold.size : world.size();
      for (int copy = 0; copy < placed; ++copy) {
        for (int r = first; r < first + size; ++r) s.gpus.push_back(gpu_of(r, copy));
      }
    }
    return s;
  };
  return {place_copies(one, shape, world, topology, placed),
          sample(one.fold.forward_first),
          sample(one.fold.backward_first),
          copies,
          reduced,
          std::move(reason),
          std::move(fold_reason)};
}

// Why a folded ring must be simulated on every rank after all ("" when the fold stands). An
// inexact fold simulates the busiest window as if every window ran in step with it. Where the
// windows hand accumulators on at every outer hop (a double ring, or a backward whose queries
// travel) and the folded backward leaves more than 1% of its time to exposed transfers, each hop
// waits for whichever window was slowest at the step before, and those waits add up around the
// ring where the fold counts one window's: 7.6-8.0% short on a800-4hca x 16 at 1K tokens a GPU,
// within 0.01% at 1% exposure or less (tools/fold-check.py, docs/cost-models.md). Megatron-CP's
// and LoongTrain USP's flat K,V rings stay within 0.07% at any exposure there.
std::string fold_misses_coupling(const Lowering& lowering, const PhaseFigures& backward,
                                 const AttentionStrategy& strategy) {
  const RingFold& fold = lowering.graphs.fold;
  const bool coupled = strategy.ring == RingKind::Double || strategy.backward == BackwardMode::QRing;
  if (fold.windows <= 1 || fold.exact || !coupled || backward.time_s <= 0) return "";
  if (backward.exposed_comm_s <= 0.01 * backward.time_s) return "";
  return fmt::format(
      "its backward exposes {:.1f}% of its time to transfers in one window, and then the windows wait on each other",
      100 * backward.exposed_comm_s / backward.time_s);
}

Json phase_json(const PhaseFigures& f) {
  Json by_class = Json::object();
  for (std::size_t c = 0; c < topo::kPathClassCount; ++c) {
    if (f.bytes_per_rank_by_class[c] > 0) {
      by_class[topo::to_string(static_cast<topo::PathClass>(c))] = f.bytes_per_rank_by_class[c];
    }
  }
  Json by_link = Json::object();
  for (std::size_t k = 0; k < topo::kLinkKindCount; ++k) {
    if (f.link_bytes_per_rank[k] > 0)
      by_link[topo::to_string(static_cast<topo::LinkKind>(k))] = f.link_bytes_per_rank[k];
  }
  return Json{{"time_s", f.time_s},
              {"compute_max_s", f.compute_max_s},
              {"exposed_comm_s", f.exposed_comm_s},
              {"imbalance", f.imbalance},
              {"flops", f.flops_total},
              {"comm_bytes_per_rank", f.bytes_per_rank},
              {"comm_bytes_per_rank_max", f.bytes_per_rank_max},
              {"comm_bytes_per_rank_by_class", by_class},
              {"link_bytes_per_rank_by_kind", by_link},
              {"tasks", f.tasks}};
}

}  // namespace

LayerSimulation simulate_attention_layer(const AttentionShape& shape, const Mask& mask,
                                         const AttentionStrategy& strategy, const topo::Topology& topology,
                                         const LayerSimOptions& options, LayerRuns* runs) {
  LayerSimulation sim;
  sim.strategy = strategy;
  sim.not_applicable = check_applicable(strategy, shape, mask, topology);
  if (!sim.not_applicable.empty()) return sim;
  // Report the inner ring size actually run (0 in a strategy means "ring ranks per node").
  if (strategy.ring == RingKind::Double)
    sim.strategy.inner = ring_geometry(strategy, attention_world(shape, topology)).inner;

  const CostModels models = options.models.compute ? options.models : make_cost_models();
  const auto engine = make_engine(options.engine);
  EngineOptions engine_options;
  engine_options.progress = options.progress;
  engine_options.record_links = runs != nullptr;
  engine_options.record_times = runs != nullptr;  // figures need only makespans and busy times

  // A trace shows every GPU, so it simulates every copy and every rank.
  const bool reduce = options.reduce_copies && runs == nullptr;
  // The backward first: it decides whether the fold stands, before the forward is simulated.
  Lowering lowering = lower(shape, mask, strategy, topology, reduce, options.fold_rings && runs == nullptr, models);
  const auto run_backward = [&](SimResult& result) {
    result = engine->run(lowering.graphs.backward, topology, models, engine_options);
    return figures(lowering.graphs.backward, result, lowering.graphs.backward_flops, topology, lowering.backward);
  };
  SimResult backward;
  sim.backward = run_backward(backward);
  if (std::string why = fold_misses_coupling(lowering, sim.backward, strategy); !why.empty()) {
    lowering = lower(shape, mask, strategy, topology, reduce, false, models);
    lowering.fold_reason = std::move(why);
    sim.backward = run_backward(backward);
  }
  SimResult forward = engine->run(lowering.graphs.forward, topology, models, engine_options);
  LoweredAttention& lowered = lowering.graphs;
  sim.copies = lowering.copies;
  sim.copies_simulated = lowering.copies_reduced ? 1 : lowering.copies;
  sim.copies_note = lowering.reason;
  sim.ring_windows = lowered.fold.windows;
  sim.ring_fold_exact = lowered.fold.exact;
  sim.ring_note = lowering.fold_reason;
  sim.forward = figures(lowered.forward, forward, lowered.forward_flops, topology, lowering.forward);
  if (lowered.fold.windows > 1 && !lowered.fold.exact) {
    sim.forward.imbalance = lowered.fold.forward_imbalance;
    sim.backward.imbalance = lowered.fold.backward_imbalance;
  }
  if (runs) {
    runs->forward = {std::move(lowered.forward), std::move(forward)};
    runs->backward = {std::move(lowered.backward), std::move(backward)};
  }
  return sim;
}

Json to_json(const LayerSimulation& sim) {
  const auto& s = sim.strategy;
  Json j{{"strategy", s.name},
         {"ulysses", s.ulysses},
         {"ring", to_string(s.ring)},
         {"inner", s.inner},
         {"layout", to_string(s.layout)},
         {"backward_mode", to_string(s.backward)},
         {"dkv_bytes", s.dkv_bytes},
         {"dq_bytes", s.dq_bytes},
         {"overlap", s.overlap},
         {"applicable", sim.not_applicable.empty()}};
  if (!sim.not_applicable.empty()) {
    j["reason"] = sim.not_applicable;
    return j;
  }
  j["copies"] = Json{{"total", sim.copies}, {"simulated", sim.copies_simulated}};
  if (!sim.copies_note.empty()) j["copies"]["why_all"] = sim.copies_note;
  j["ring_fold"] = Json{{"windows", sim.ring_windows}, {"exact", sim.ring_fold_exact}};
  if (!sim.ring_note.empty()) j["ring_fold"]["why_not"] = sim.ring_note;
  j["forward_s"] = sim.forward.time_s;
  j["backward_s"] = sim.backward.time_s;
  j["exposed_comm_s"] = sim.forward.exposed_comm_s + sim.backward.exposed_comm_s;
  j["comm_bytes_forward"] = sim.forward.bytes_per_rank;
  j["comm_bytes_backward"] = sim.backward.bytes_per_rank;
  j["imbalance"] = std::max(sim.forward.imbalance, sim.backward.imbalance);
  j["forward"] = phase_json(sim.forward);
  j["backward"] = phase_json(sim.backward);
  return j;
}

}  // namespace burst::sim
