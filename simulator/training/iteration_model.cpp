// One training iteration on the critical path: the sum of what cannot overlap.
//
// Every decoder layer is the same, so one attention layer is simulated (forward and backward,
// its rings or all-to-alls lowered per strategy and scheduled on the topology, each ring step's
// merge or accumulation included) and multiplied by the layer count; the rest of the layer is
// priced kernel by kernel at the local token count c (layer_kernels.cpp):
//   dense_compute          L x (projections + MLP GEMMs, forward and backward)
//   elementwise            L x (norms, RoPE, residual adds, activation, forward and backward,
//                          and D = rowsum(dO * O)) + the loss's softmax and gradient
//   attention_compute      L x (forward + backward compute of the busiest rank)
//   attention_exposed_comm L x (forward + backward ring / all-to-all time not hidden by compute)
//   recompute              L x (dense and elementwise forward, unless nothing is recomputed,
//                          + the recomputed share r of the attention forward, its exposed
//                          comm included; r = attention_recompute_fraction())
//   lm_head                forward 2 c h V, backward twice that, plus one more forward when the
//                          head is fused in chunks (logits recomputed); one GEMM per chunk
//   zero_exposed_comm      per layer, the part of its ZeRO collectives (zero_collectives.cpp)
//                          longer than the layer time they are prefetched behind, less the
//                          time the ring's own hops keep the NIC busy; the embedding and LM
//                          head's hide behind the LM head. On CPU ranks (the local topology)
//                          none hides: MPI's shared-memory transport copies each message inside
//                          the calls of the rank that takes it, on the cores the layers compute
//                          on (docs/fidelity.md, "The local machine")
//   tp_exposed_comm        tensor parallelism's all-gathers and reduce-scatters per layer that
//                          no GEMM hides, forward and backward, and again in a dense recompute
//                          (tp_collectives.cpp)
//   optimizer              optimizer_model.cpp
// With D data-parallel replicas and micro-batches of b sequences, everything above runs once per
// micro-batch (batch / (D b) of them: gradient accumulation) at c = seq b / (P / (T D)); the ZeRO
// collectives run once per step where the framework reduces only after the last micro-batch
// (stages 0 and 1) and once per micro-batch where it reduces or gathers every one (stage 2's
// reduce-scatter, stage 3's gathers: DeepSpeed and FSDP), zero_collectives.cpp.
// Under tensor parallelism of T, c is the context-parallel rank's tokens, the GEMMs split T
// ways, the elementwise kernels move 1 / T (sequence parallelism), and attention runs T copies of
// the strategy side by side, each on heads / T (simulate_attention_layer of attention_shape).
// The ZeRO collectives share the NICs with the rings' inter-node hops: they hide only behind
// the part of a layer's time the ring leaves its NIC idle.
#include <algorithm>
#include <limits>

#include "simulator/detail/training/iteration_parts.hpp"
#include "topologies/local_calibration.hpp"

namespace burst::sim {
namespace {

bool is_intra_node(topo::LinkKind kind) { return kind != topo::LinkKind::Network; }

}  // namespace

double TimeBreakdown::total() const {
  return dense_compute + elementwise + attention_compute + attention_exposed_comm + recompute + lm_head +
         zero_exposed_comm + tp_exposed_comm + optimizer;
}

IterationSimulation simulate_iteration(const TrainingJob& job, const TrainingStrategy& strategy,
                                       const topo::Topology& topology, const LayerSimOptions& options) {
  if (const std::string reason = check_training(job, strategy, topology); !reason.empty()) {
    IterationSimulation it;
    it.strategy = strategy;
    it.not_applicable = reason;
    return it;
  }
  return simulate_iteration(
      job, strategy, topology, options,
      simulate_attention_layer(attention_shape(job, strategy), job.mask, strategy.attention, topology, options));
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
  const int tp = std::max(1, strategy.tp);
  const double layers = m.layers, gpus = topology.gpu_count(), c = local_tokens(job, topology, strategy);
  const double micro_batches = accumulation_steps(job, strategy);
  const LayerKernels kernels = layer_kernels(job, c, tp, *models.compute, gpu);
  // Per GPU: the rank's c tokens through 1 / T of the weights (norms are not GEMMs).
  const double dense_forward_flops = 2 * c * (m.layer_params() - 2.0 * m.hidden) / tp;
  const TensorParallelTime tp_comm = tensor_parallel_time(job, tp, c, kernels, topology, *models.comm);
  const double dense_forward = kernels.gemm_forward_s + kernels.elementwise_forward_s + tp_comm.forward_per_layer;
  const double dense_backward = kernels.gemm_backward_s + kernels.elementwise_backward_s + tp_comm.backward_per_layer;
  const double head_forward_flops = 2 * c * m.hidden * static_cast<double>(m.vocab) / tp;
  const double chunks = strategy.lm_head_chunks;
  const double head_forward =
      chunks * gemm_seconds(*models.compute, gpu, c / chunks, static_cast<double>(m.vocab) / tp, m.hidden);
  const double head_backward = 2 * head_forward + (strategy.lm_head_chunks > 1 ? head_forward : 0);

  const PhaseFigures& fwd = it.attention.forward;
  const PhaseFigures& bwd = it.attention.backward;
  const double share = attention_recompute_fraction(job.mask, job.seq, strategy.checkpoint);
  const double dense_recompute = strategy.checkpoint.policy == CheckpointPolicy::None ? 0 : dense_forward;
  const double layer_recompute = dense_recompute + share * (fwd.compute_max_s + fwd.exposed_comm_s);

  // Every micro-batch runs the same forward and backward; only the step's own work (the
  // optimizer, and the collectives ZeRO runs once per step) is not repeated.
  TimeBreakdown& t = it.time;
  const double mb = micro_batches;
  t.dense_compute = mb * layers * (kernels.gemm_forward_s + kernels.gemm_backward_s);
  t.elementwise = mb * (layers * (kernels.elementwise_forward_s + kernels.elementwise_backward_s) +
                        loss_seconds(m, c, tp, strategy.lm_head_chunks, job.dtype_bytes, *models.compute, gpu));
  t.attention_compute = mb * layers * (fwd.compute_max_s + bwd.compute_max_s);
  t.attention_exposed_comm = mb * layers * (fwd.exposed_comm_s + bwd.exposed_comm_s);
  // The recompute's dense forward carries its collectives; the rest are the layer's own.
  t.recompute = mb * layers * layer_recompute;
  t.tp_exposed_comm = mb * layers * (tp_comm.forward_per_layer + tp_comm.backward_per_layer);
  t.lm_head = mb * (head_forward + head_backward);

  const ZeroTraffic zero = zero_traffic(job, strategy, topology, *models.comm);
  const double zf = zero.forward_repeats, zb = zero.backward_repeats;
  const bool copies_on_cores = topo::is_cpu_rank(gpu);
  const auto exposed = [&](double bytes, double behind) {
    return std::max(0.0, zero.seconds(bytes) - (copies_on_cores ? 0.0 : behind));
  };
  // Across nodes the collectives share each GPU's NIC with the ring's inter-node hops: they
  // hide only in the time the ring leaves the NIC idle (the ring's network bytes at the same
  // per-GPU bandwidth).
  const auto ring_nic_s = [&](const PhaseFigures& phase) {
    return zero.crosses_nodes
               ? zero.seconds(phase.link_bytes_per_rank[static_cast<std::size_t>(topo::LinkKind::Network)])
               : 0.0;
  };
  const double layer_forward = dense_forward + fwd.time_s - ring_nic_s(fwd);
  const double layer_backward =
      dense_backward + bwd.time_s + layer_recompute - ring_nic_s(bwd) - share * ring_nic_s(fwd);
  t.zero_exposed_comm = layers * (zf * exposed(zero.forward_per_layer, layer_forward) +
                                  zb * exposed(zero.backward_per_layer, layer_backward)) +
                        zf * exposed(zero.forward_rest, head_forward) + zb * exposed(zero.backward_rest, head_backward);
  t.optimizer = optimizer_seconds(job, strategy.zero, topology, *models.comm);

  it.step_time_s = t.total();
  const double loss = loss_seconds(m, c, tp, strategy.lm_head_chunks, job.dtype_bytes, *models.compute, gpu);
  it.forward_s = mb * (layers * (dense_forward + fwd.time_s) + head_forward + loss);
  it.backward_s = mb * (layers * (dense_backward + bwd.time_s + layer_recompute) + head_backward);
  const double tokens = static_cast<double>(job.seq) * job.batch;
  it.tokens_per_s_per_gpu = tokens / it.step_time_s / gpus;
  it.model_flops = mb * 3 * (gpus * (layers * dense_forward_flops + head_forward_flops) + layers * fwd.flops_total);
  it.mfu = it.model_flops / (it.step_time_s * gpus * gpu.peak_bf16_flops);

  for (std::size_t k = 0; k < topo::kLinkKindCount; ++k) {
    const double bytes = mb * layers * ((1 + share) * fwd.link_bytes_per_rank[k] + bwd.link_bytes_per_rank[k]);
    (is_intra_node(static_cast<topo::LinkKind>(k)) ? it.comm_bytes_intra : it.comm_bytes_inter) += bytes;
  }
  (zero.crosses_nodes ? it.comm_bytes_inter : it.comm_bytes_intra) += zero.bytes_per_iteration(m.layers);
  it.comm_bytes_intra += offload_bytes(job, strategy.zero, topology);
  // Tensor parallelism's collectives stay inside the node (a dense recompute repeats the forward's).
  const double tp_forwards = dense_recompute > 0 ? 2 : 1;
  it.comm_bytes_intra +=
      mb * layers * (tp_forwards * tp_comm.forward_bytes_per_layer + tp_comm.backward_bytes_per_layer);
  return it;
}

}  // namespace burst::sim
