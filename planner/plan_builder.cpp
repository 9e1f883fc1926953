// Filling the plan contract from the search (see plan_builder.hpp).
#include "planner/plan_builder.hpp"

#include <fmt/format.h>

#include "simulator/attention/ring.hpp"

namespace burst::planner {
namespace {

std::vector<plan::Item> items_of(const Json& breakdown) {
  std::vector<plan::Item> items;
  for (const auto& [name, value] : breakdown.items()) {
    if (name != "total") items.push_back({name, value.get<double>()});
  }
  return items;
}

}  // namespace

plan::Strategy plan_strategy(const sim::TrainingStrategy& strategy, const topo::Topology& topology) {
  const sim::AttentionStrategy& a = strategy.attention;
  plan::Strategy s;
  static_cast<AttentionKnobs&>(s) = a;  // the knobs are the same structs: copied whole
  static_cast<TrainingKnobs&>(s) = strategy;
  s.name = a.name;
  const sim::World world = sim::replica_world(topology, strategy.tp, strategy.dp);
  s.cp = a.ulysses > 0 ? world.size() / a.ulysses : 0;
  // the ring's shape: the simulator's inner 0 (ring ranks per node) made explicit
  s.inner = s.cp;
  s.outer = 1;
  if (a.ring == RingKind::Double && a.ulysses > 0 && s.cp > 0) {
    const int inner = a.inner > 0 ? a.inner : sim::ring_ranks_per_node(a.ulysses, world);
    if (inner > 0 && s.cp % inner == 0) {
      s.inner = inner;
      s.outer = s.cp / inner;
    }
  }
  return s;
}

sim::AttentionStrategy attention_strategy(const plan::Strategy& strategy) {
  sim::AttentionStrategy a;
  static_cast<AttentionKnobs&>(a) = strategy;
  a.name = strategy.name;
  if (strategy.ring != RingKind::Double) a.inner = 0;  // a plan's flat ring records inner = cp
  return a;
}

sim::TrainingStrategy training_strategy(const plan::Strategy& strategy) {
  sim::TrainingStrategy t;
  static_cast<TrainingKnobs&>(t) = strategy;
  t.attention = attention_strategy(strategy);
  return t;
}

plan::Prediction plan_prediction(const sim::IterationSimulation& sim) {
  plan::Prediction p;
  p.step_time_s = sim.step_time_s;
  p.tokens_per_s_per_gpu = sim.tokens_per_s_per_gpu;
  p.mfu = sim.mfu;
  p.exposed_comm_s = sim.time.attention_exposed_comm + sim.time.zero_exposed_comm + sim.time.tp_exposed_comm;
  p.memory_total_bytes = sim.memory.total();
  p.memory_bytes = items_of(sim::to_json(sim.memory));
  p.time_s = items_of(sim::to_json(sim.time));
  p.comm_bytes_intra = sim.comm_bytes_intra;
  p.comm_bytes_inter = sim.comm_bytes_inter;
  p.attention_forward_s = sim.attention.forward.time_s;
  p.attention_backward_s = sim.attention.backward.time_s;
  p.forward_pass_s = sim.forward_s;
  p.backward_pass_s = sim.backward_s;
  return p;
}

SearchRequest replan_request(const plan::Plan& plan) {
  SearchRequest request;
  request.job.model = plan.job.model;
  request.job.seq = plan.job.seq;
  request.job.batch = plan.job.batch;
  request.job.mask = plan.job.mask;
  request.job.dtype_bytes = plan.job.dtype == "fp32" ? 4 : 2;
  request.job.linears = sim::parse_linears(plan.job.linears, "plan:/job/linears");
  request.memory_budget_bytes = plan.job.memory_budget_bytes;
  request.memory_margin_bytes = plan.job.memory_margin_bytes;
  request.only_family = plan.job.only_family;
  request.only_tp = plan.job.only_tp;
  request.only_dp = plan.job.only_dp;
  if (!plan.job.only_checkpoint.empty()) {
    request.checkpoint = parse_checkpoint_for_every_family(plan.job.only_checkpoint, "plan:/job/only_checkpoint");
  }
  request.kernel_path = plan.job.kernel_path;
  return request;
}

plan::Plan build_plan(const SearchResult& result, const SearchRequest& request, const topo::Topology& topology) {
  const Evaluated& chosen = *result.chosen_plan();
  plan::Plan p;
  p.generator = fmt::format("burst {}", BURST_VERSION);
  p.topology_name = fmt::format("{} x{}", topology.name(), topology.nodes());
  p.topology_hash = topology.hash();
  p.cluster = topology.to_json();
  p.job.model = request.job.model;
  p.job.seq = request.job.seq;
  p.job.batch = request.job.batch;
  p.job.mask = request.job.mask;
  p.job.dtype = request.job.dtype_bytes == 4 ? "fp32" : "bf16";
  p.job.linears = sim::plan_linears(request.job.linears);
  p.job.memory_budget_bytes = result.memory_budget_bytes;
  p.job.memory_margin_bytes = request.memory_margin_bytes;
  p.job.only_family = request.only_family;
  p.job.only_tp = request.only_tp;
  p.job.only_dp = request.only_dp;
  p.job.only_checkpoint = request.checkpoint ? to_string(*request.checkpoint) : "";
  p.job.kernel_path = request.kernel_path;
  p.strategy = plan_strategy(chosen.sim.strategy, topology);
  for (int g = 0; g < topology.gpu_count(); ++g) p.ranks.push_back({g, topology.node_of(g), topology.local_of(g)});
  // The rings of every tensor-parallel rank of every replica: one replica's context-parallel
  // orders on its GPUs.
  const int tp = chosen.sim.strategy.tp, dp = chosen.sim.strategy.dp;
  const sim::World world = sim::replica_world(topology, tp, dp);
  const sim::RingGeometry geometry = sim::ring_geometry(chosen.sim.strategy.attention, world);
  for (int copy = 0; copy < tp * dp; ++copy) {
    for (const sim::RingOrder& r : sim::ring_orders(geometry)) {
      std::vector<int> order;
      for (const int rank : r.order) order.push_back(sim::topology_gpu(tp, world.size(), rank, copy));
      p.rings.push_back({r.level, r.member, std::move(order), copy % tp, copy / tp});
    }
  }
  p.predicted = plan_prediction(chosen.sim);
  for (const Evaluated& e : result.best_per_family) {
    plan::Alternative alt;
    alt.strategy = plan_strategy(e.sim.strategy, topology);
    alt.feasible = e.feasible;
    alt.reason = e.reason;
    if (e.sim.not_applicable.empty()) alt.predicted = plan_prediction(e.sim);
    p.alternatives.push_back(std::move(alt));
  }
  for (const Evaluated& e : result.best_per_layout) {
    p.layouts.push_back({plan_strategy(e.sim.strategy, topology), e.feasible, e.reason, plan_prediction(e.sim)});
  }
  p.candidates_evaluated = result.candidates_evaluated;
  return p;
}

}  // namespace burst::planner
