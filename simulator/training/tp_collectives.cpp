// Tensor parallelism's collectives, as Megatron-LM runs them with sequence parallelism
// (megatron/core/tensor_parallel/layers.py, LinearWithGradAccumulationAndAsyncCommunication, and
// mappings.py, at core_v0.14.0; Korthikanti et al., "Reducing Activation Recomputation in Large
// Transformer Models", 2022).
//
// Between the linear layers every GPU of a tensor-parallel group of T holds c / T of the
// context-parallel rank's c tokens of the [c, h] activations. Per decoder layer:
//   forward   an all-gather of [c, h] before each column-parallel layer (QKV, the MLP's input)
//             and a reduce-scatter of [c, h] after each row-parallel layer (the output
//             projection, the MLP's output): 4 collectives on the critical path (Megatron
//             overlaps them with the GEMMs only under --tp-comm-overlap, Transformer Engine's
//             userbuffers, which this model does not assume);
//   backward  each row-parallel layer's output gradient all-gathered (2, on the critical path);
//             each column-parallel layer's input all-gathered again for its weight gradient and
//             its input gradient reduce-scattered (4), which Megatron overlaps with that layer's
//             input- and weight-gradient GEMMs: only what exceeds those GEMMs is exposed.
// A dense recompute runs the forward's 4 again (iteration_model.cpp counts it). Each collective
// moves c h e (T - 1) / T bytes per GPU, ring-paced by the slowest pair of the group's GPUs (the
// first T of a node: NVLink on NVSwitch nodes), at the comm model's efficiency for that link.
// Under TransformerEngine's FP8 linears the all-gathers carry FP8, 1 byte an element: it casts a
// column-parallel layer's input before gathering it, in the forward and again for the weight
// gradient, and a row-parallel layer's output gradient before gathering it
// (NVIDIA/TransformerEngine @d0067d0d transformer_engine/pytorch/module/linear.py,
// `gather_along_first_dim(..., quantizer=...)`; module/base.py `grad_output_preprocess`); the
// reduce-scatters stay in the activation dtype.
#include <algorithm>

#include "simulator/detail/training/iteration_parts.hpp"

namespace burst::sim {

TensorParallelBytes tensor_parallel_bytes(const TrainingJob& job, int tp, double tokens) {
  if (tp <= 1) return {};
  const double elements = tokens * job.model.hidden * (tp - 1.0) / tp;
  return {elements * (fp8_on_transformer_engine(job) ? 1 : job.dtype_bytes), elements * job.dtype_bytes};
}

TensorParallelTime tensor_parallel_time(const TrainingJob& job, int tp, double tokens, const LayerKernels& kernels,
                                        const topo::Topology& topology, const CommModel& comm) {
  TensorParallelTime t;
  if (tp <= 1) return t;
  double bandwidth = 0;
  topo::LinkKind kind = topo::LinkKind::NvLink;
  for (int a = 0; a < tp; ++a) {
    for (int b = 0; b < tp; ++b) {
      if (a == b) continue;
      const topo::PathInfo path = topology.path(a, b);
      if (bandwidth == 0 || path.bandwidth_Bps < bandwidth) {
        bandwidth = path.bandwidth_Bps;
        kind = link_kind_of(path.cls);
      }
    }
  }
  const double usable = comm.capacity(topo::DirectedLink{kind, bandwidth, 0, topo::Sharing::Shared});
  const TensorParallelBytes bytes = tensor_parallel_bytes(job, tp, tokens);
  const double gather = bytes.all_gather / usable, scatter = bytes.reduce_scatter / usable;  // one collective's seconds
  t.forward_per_layer = 2 * gather + 2 * scatter;
  t.backward_per_layer = 2 * gather + std::max(0.0, 2 * gather + 2 * scatter - kernels.column_gemm_backward_s);
  t.forward_bytes_per_layer = bytes.forward_per_layer();
  t.backward_bytes_per_layer = bytes.backward_per_layer();
  return t;
}

}  // namespace burst::sim
