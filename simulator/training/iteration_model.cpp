// One training iteration on the critical path: the sum of what cannot overlap.
//
// Every decoder layer is the same, so one attention layer is simulated (forward and backward,
// its rings or all-to-alls lowered per strategy and scheduled on the topology) and multiplied
// by the layer count; the dense parts are closed forms costed by the compute model as GEMMs at
// the local token count c (2 FLOPs per parameter per token forward, twice that backward):
//   dense_compute          L x (projections + MLP, forward and backward)
//   attention_compute      L x (forward + backward compute of the busiest rank)
//   attention_exposed_comm L x (forward + backward ring / all-to-all time not hidden by compute)
//   recompute              L x (dense forward, unless nothing is recomputed, + the recomputed
//                          share r of the attention forward, its exposed comm included;
//                          r = attention_recompute_fraction())
//   lm_head                forward 2 c h V, backward twice that, plus one more forward when the
//                          head is fused in chunks (logits recomputed in the backward)
//   zero_exposed_comm      per layer, the part of its ZeRO collectives (zero_collectives.cpp)
//                          longer than the compute they are prefetched behind; the embedding
//                          and LM head's hide behind the LM head
//   optimizer              optimizer_model.cpp
// The ZeRO collectives and the attention rings are costed apart: contention between them on
// the same NICs is not modelled (the per-layer collectives are small next to 1M-token rings).
#include <algorithm>
#include <limits>

#include "simulator/training/iteration_parts.hpp"

namespace burst::sim {
namespace {

// Seconds of a dense GEMM workload of `flops` over `tokens` rows on one GPU.
double gemm_seconds(const ComputeModel& compute, const topo::GpuSpec& gpu, double flops, double tokens) {
  constexpr double kMaxBlock = std::numeric_limits<std::int32_t>::max();
  Task task;
  task.kind = TaskKind::Compute;
  task.kernel = KernelKind::Gemm;
  task.amount = flops;
  task.block_q = task.block_k = static_cast<std::int32_t>(std::clamp(tokens, 1.0, kMaxBlock));
  return compute.seconds(task, gpu);
}

bool is_intra_node(topo::LinkKind kind) { return kind != topo::LinkKind::Network; }

}  // namespace

double TimeBreakdown::total() const {
  return dense_compute + attention_compute + attention_exposed_comm + recompute + lm_head + zero_exposed_comm +
         optimizer;
}

IterationSimulation simulate_iteration(const TrainingJob& job, const TrainingStrategy& strategy,
                                       const topo::Topology& topology, const LayerSimOptions& options) {
  if (const std::string reason = check_training(job, strategy, topology); !reason.empty()) {
    IterationSimulation it;
    it.strategy = strategy;
    it.not_applicable = reason;
    return it;
  }
  return simulate_iteration(job, strategy, topology, options,
                            simulate_attention_layer(attention_shape(job), job.mask, strategy.attention, topology, options));
}

IterationSimulation simulate_iteration(const TrainingJob& job, const TrainingStrategy& strategy,
                                       const topo::Topology& topology, const LayerSimOptions& options,
                                       const LayerSimulation& attention) {
  IterationSimulation it;
  it.strategy = strategy;
  it.not_applicable = check_training(job, strategy, topology);
  if (!it.not_applicable.empty()) return it;
  it.attention = attention;
  it.not_applicable = it.attention.not_applicable;
  if (!it.not_applicable.empty()) return it;
  it.memory = estimate_memory(job, strategy, topology);

  const CostModels models = options.models.compute ? options.models : make_cost_models();
  const ModelSpec& m = job.model;
  const topo::GpuSpec& gpu = topology.gpu();
  const double layers = m.layers, gpus = topology.gpu_count(), c = local_tokens(job, topology);
  const auto gemm = [&](double flops) { return gemm_seconds(*models.compute, gpu, flops, c); };

  const double dense_forward_flops = 2 * c * (m.layer_params() - 2.0 * m.hidden);  // norms are not GEMMs
  const double dense_forward = gemm(dense_forward_flops), dense_backward = gemm(2 * dense_forward_flops);
  const double head_forward_flops = 2 * c * m.hidden * static_cast<double>(m.vocab);
  const double head_forward = gemm(head_forward_flops);
  const double head_backward = gemm(2 * head_forward_flops) + (strategy.lm_head_chunks > 1 ? head_forward : 0);

  const PhaseFigures& fwd = it.attention.forward;
  const PhaseFigures& bwd = it.attention.backward;
  const double share = attention_recompute_fraction(job.mask, job.seq, strategy.checkpoint);
  const double dense_recompute = strategy.checkpoint.policy == CheckpointPolicy::None ? 0 : dense_forward;
  const double layer_recompute = dense_recompute + share * (fwd.compute_max_s + fwd.exposed_comm_s);

  TimeBreakdown& t = it.time;
  t.dense_compute = layers * (dense_forward + dense_backward);
  t.attention_compute = layers * (fwd.compute_max_s + bwd.compute_max_s);
  t.attention_exposed_comm = layers * (fwd.exposed_comm_s + bwd.exposed_comm_s);
  t.recompute = layers * layer_recompute;
  t.lm_head = head_forward + head_backward;

  const ZeroTraffic zero = zero_traffic(job, strategy, topology, *models.comm);
  const auto exposed = [&](double bytes, double behind) { return std::max(0.0, zero.seconds(bytes) - behind); };
  const double layer_forward = dense_forward + fwd.time_s;
  const double layer_backward = dense_backward + bwd.time_s + layer_recompute;
  t.zero_exposed_comm = layers * (exposed(zero.forward_per_layer, layer_forward) +
                                  exposed(zero.backward_per_layer, layer_backward)) +
                        exposed(zero.forward_rest, head_forward) + exposed(zero.backward_rest, head_backward);
  t.optimizer = optimizer_seconds(job, strategy.zero, topology, *models.comm);

  it.step_time_s = t.total();
  const double tokens = static_cast<double>(job.seq) * job.batch;
  it.tokens_per_s_per_gpu = tokens / it.step_time_s / gpus;
  it.model_flops = 3 * (gpus * (layers * dense_forward_flops + head_forward_flops) + layers * fwd.flops_total);
  it.mfu = it.model_flops / (it.step_time_s * gpus * gpu.peak_bf16_flops);

  for (std::size_t k = 0; k < topo::kLinkKindCount; ++k) {
    const double bytes = layers * ((1 + share) * fwd.link_bytes_per_rank[k] + bwd.link_bytes_per_rank[k]);
    (is_intra_node(static_cast<topo::LinkKind>(k)) ? it.comm_bytes_intra : it.comm_bytes_inter) += bytes;
  }
  (zero.crosses_nodes ? it.comm_bytes_inter : it.comm_bytes_intra) += zero.bytes_per_iteration(m.layers);
  it.comm_bytes_intra += offload_bytes(job, strategy.zero, topology);
  return it;
}

}  // namespace burst::sim
