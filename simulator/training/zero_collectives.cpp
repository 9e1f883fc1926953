// The collectives of ZeRO data parallelism, and how long each takes.
//
// Every GPU trains on its own tokens of the same sequences, so all P GPUs are one data-parallel
// group for the weights: gradients must be summed over all of them, and what is sharded must be
// gathered. Under tensor parallelism of T each GPU holds 1 / T of every layer's weights, and the
// P / T GPUs holding the same share (one per tensor-parallel group) are the group. Per decoder layer of p parameters, e
// bytes each (bf16 on the wire), gradients g bytes each (e, or 4 where the framework reduces its fp32 main gradients:
// Megatron's grad_reduce_in_fp32 under bf16, docs/strategies.md):
//   stage 3   forward: all-gather p (the layer's weights); backward: all-gather p again (they
//             were freed after the forward) and reduce-scatter p gradients;
//   stage 1-2 forward: all-gather p (the parameters updated by the last step, bucketed per layer
//             and prefetched as Megatron's overlapped param gather does); backward:
//             reduce-scatter p gradients;
//   stage 0   backward: all-reduce p gradients (a reduce-scatter plus an all-gather).
// The embedding and LM head (2 * vocab * hidden) follow the same rules once per phase.
// Under gradient accumulation (several micro-batches per step) stages 0 and 1 reduce the
// accumulated gradients once, after the last micro-batch (Megatron-LM's DDP and distributed
// optimizer, DeepSpeed's stage 1), and gather the updated parameters once; stage 2 reduce-
// scatters every micro-batch's gradients into the shard (DeepSpeed's stage 2), stage 3 also
// gathers the parameters in every micro-batch's forward and backward (DeepSpeed, FSDP).
// The group is every GPU holding the same weights: the data-parallel replicas and the
// context-parallel ranks of each (Megatron-LM's data-parallel group with context parallelism).
// A ring all-gather or reduce-scatter of B bytes sends B (P - 1) / P bytes from every GPU,
// paced by the slowest hop of the ring: across nodes, each GPU's share of its node's NICs
// (topology.inter_node_bandwidth_per_gpu()); inside one node, the worst GPU pair. Both are
// scaled by the comm model's efficiency for that kind of link (capacity() of that link).
#include <algorithm>

#include "simulator/detail/training/iteration_parts.hpp"

namespace burst::sim {

topo::LinkKind link_kind_of(topo::PathClass cls) {
  switch (cls) {
    case topo::PathClass::NVL: return topo::LinkKind::NvLink;
    case topo::PathClass::SHM: return topo::LinkKind::SharedMemory;
    case topo::PathClass::SYS: return topo::LinkKind::InterSocket;
    case topo::PathClass::NET: return topo::LinkKind::Network;
    case topo::PathClass::PIX:
    case topo::PathClass::PXB:
    case topo::PathClass::PHB: break;
  }
  return topo::LinkKind::Pcie;
}

namespace {

double collective_bandwidth(const topo::Topology& topology, const CommModel& comm) {
  topo::DirectedLink hop{topo::LinkKind::Network, topology.inter_node_bandwidth_per_gpu(), 0, topo::Sharing::Shared};
  if (topology.nodes() <= 1) {
    const topo::PathInfo worst = topology.intra_node_worst();
    hop.kind = link_kind_of(worst.cls);
    hop.bandwidth_Bps = worst.bandwidth_Bps;
  }
  return comm.capacity(hop);
}

}  // namespace

double gradient_bytes(const TrainingJob& job, const FrameworkMemory& memory) {
  return memory.fp32_main_grads ? 4.0 : job.dtype_bytes;
}

ZeroTraffic zero_traffic(const TrainingJob& job, const TrainingStrategy& strategy, const topo::Topology& topology,
                         const CommModel& comm) {
  ZeroTraffic t;
  const int tp = std::max(1, strategy.tp);
  const int gpus = topology.gpu_count() / tp;
  if (gpus <= 1) return t;
  t.bandwidth_Bps = collective_bandwidth(topology, comm);
  t.crosses_nodes = topology.nodes() > 1;
  const ModelSpec& m = job.model;
  const double share = static_cast<double>(gpus - 1) / gpus;
  const double layer_params = m.layer_params() / tp;
  const double rest_params = (m.total_params() - m.layers * m.layer_params()) / tp;
  // Ring passes per phase over the parameters (e bytes) and over the gradients (g bytes).
  const int stage = strategy.zero.stage;
  const double forward_params = stage >= 1 ? 1 : 0;
  const double backward_params = stage >= 3 ? 1 : 0;
  const double backward_grads = stage >= 1 ? 1 : 2;
  const double e = job.dtype_bytes, g = gradient_bytes(job, strategy.memory);
  const int micro_batches = accumulation_steps(job, strategy);
  t.forward_repeats = stage >= 3 ? micro_batches : 1;
  t.backward_repeats = stage >= 2 ? micro_batches : 1;
  t.forward_per_layer = share * forward_params * e * layer_params;
  t.backward_per_layer = share * (backward_params * e + backward_grads * g) * layer_params;
  t.forward_rest = share * forward_params * e * rest_params;
  t.backward_rest = share * (backward_params * e + backward_grads * g) * rest_params;
  return t;
}

}  // namespace burst::sim
