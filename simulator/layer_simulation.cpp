#include "simulator/layer_simulation.hpp"

#include <algorithm>
#include <numeric>

#include "simulator/attention/ring.hpp"

namespace burst::sim {
namespace {

PhaseFigures figures(const TaskGraph& graph, const SimResult& result, const std::vector<double>& flops,
                     const topo::Topology& topology) {
  PhaseFigures f;
  const auto ranks = static_cast<std::size_t>(topology.gpu_count());
  f.tasks = graph.size();
  f.time_s = result.makespan_s;
  f.flops_total = std::accumulate(flops.begin(), flops.end(), 0.0);
  const auto& busy = result.compute_busy_s;
  if (!busy.empty()) {
    f.compute_max_s = *std::max_element(busy.begin(), busy.end());
    const double mean = std::accumulate(busy.begin(), busy.end(), 0.0) / static_cast<double>(busy.size());
    f.imbalance = mean > 0 ? f.compute_max_s / mean : 1.0;
  }
  f.exposed_comm_s = std::max(0.0, f.time_s - f.compute_max_s);

  std::vector<double> sent(ranks, 0.0);
  for (const Task& t : graph.tasks()) {
    if (t.kind != TaskKind::Transfer) continue;
    sent[static_cast<std::size_t>(t.gpu)] += t.amount;
    const auto cls = static_cast<std::size_t>(topology.path(t.gpu, t.peer).cls);
    f.bytes_per_rank_by_class[cls] += t.amount;
  }
  const double total = std::accumulate(sent.begin(), sent.end(), 0.0);
  f.bytes_per_rank = total / static_cast<double>(ranks);
  f.bytes_per_rank_max = sent.empty() ? 0.0 : *std::max_element(sent.begin(), sent.end());
  for (double& b : f.bytes_per_rank_by_class) b /= static_cast<double>(ranks);
  for (std::size_t id = 0; id < result.link_bytes.size(); ++id) {
    const auto kind = static_cast<std::size_t>(topology.link(static_cast<topo::LinkId>(id)).kind);
    f.link_bytes_per_rank[kind] += result.link_bytes[id] / static_cast<double>(ranks);
  }
  return f;
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

  LoweredAttention lowered = lower_attention(shape, mask, strategy, topology);
  const auto engine = make_engine(options.engine);
  const CostModels models = options.models.compute ? options.models : make_cost_models();
  EngineOptions engine_options;
  engine_options.progress = options.progress;
  engine_options.record_links = runs != nullptr;
  engine_options.record_times = runs != nullptr;  // figures need only makespans and busy times

  SimResult forward = engine->run(lowered.forward, topology, models, engine_options);
  SimResult backward = engine->run(lowered.backward, topology, models, engine_options);
  sim.forward = figures(lowered.forward, forward, lowered.forward_flops, topology);
  sim.backward = figures(lowered.backward, backward, lowered.backward_flops, topology);
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
