// Pieces of the iteration model shared between its files (internal to simulator/training).
#pragma once

#include "simulator/training/training.hpp"

namespace burst::sim {

// The job's linear layers are FP8 as TransformerEngine runs them: GEMM inputs kept in FP8, FP8
// weight copies, FP8 all-gathers (memory_model.cpp, tp_collectives.cpp).
[[nodiscard]] inline bool fp8_on_transformer_engine(const TrainingJob& job) {
  return job.linears == LinearPrecision::Fp8 && job.fp8_library == Fp8Library::TransformerEngine;
}

// The ZeRO collectives of one iteration, as bytes each GPU sends (a ring collective over all P
// GPUs moves the buffer's bytes x (P - 1) / P per GPU) per phase, for every decoder layer and
// once for the embedding and LM head together.
struct ZeroTraffic {
  double bandwidth_Bps = 0;  // usable per GPU: the slowest hop of a ring over every GPU
  bool crosses_nodes = false;
  double forward_per_layer = 0;
  double backward_per_layer = 0;
  double forward_rest = 0;
  double backward_rest = 0;
  // How many times per optimizer step each phase's collectives run: once, or once per
  // micro-batch where the stage gathers (3) or reduces (2, 3) every micro-batch.
  int forward_repeats = 1;
  int backward_repeats = 1;

  [[nodiscard]] double seconds(double bytes) const { return bytes > 0 ? bytes / bandwidth_Bps : 0; }
  [[nodiscard]] double bytes_per_iteration(int layers) const {
    return forward_repeats * (layers * forward_per_layer + forward_rest) +
           backward_repeats * (layers * backward_per_layer + backward_rest);
  }
};

// The kind of link a path of this class ends on (zero_collectives.cpp).
[[nodiscard]] topo::LinkKind link_kind_of(topo::PathClass cls);

// Gradients are reduced in the precision the framework accumulates them in (gradient_bytes).
[[nodiscard]] ZeroTraffic zero_traffic(const TrainingJob& job, const TrainingStrategy& strategy,
                                       const topo::Topology& topology, const CommModel& comm);

// Bytes per element of the gradients the backward accumulates and the ZeRO collectives reduce:
// the activation dtype, or fp32 where the framework keeps an fp32 main-gradient buffer.
[[nodiscard]] double gradient_bytes(const TrainingJob& job, const FrameworkMemory& memory);

// Seconds of one GEMM of an m x k by a k x n matrix on one GPU (layer_kernels.cpp), on tensor
// cores `speedup` times the bf16 rate (2 for FP8 on Hopper: hw::fp8_over_bf16).
[[nodiscard]] double gemm_seconds(const ComputeModel& compute, const topo::GpuSpec& gpu, double m, double n, double k,
                                  double speedup = 1);

// One decoder layer's kernels besides attention at `tokens` tokens per context-parallel rank,
// on one of its `tp` tensor-parallel GPUs (layer_kernels.cpp).
struct LayerKernels {
  double gemm_forward_s = 0;
  double gemm_backward_s = 0;
  double column_gemm_backward_s = 0;  // of which the column-parallel layers' (QKV, the MLP's input)
  double elementwise_forward_s = 0;   // norms, RoPE, residual adds, activation
  double elementwise_backward_s = 0;  // their gradients and D = rowsum(dO * O)
};
// The job's model, dtype and linear layers (FP8 `linears` need hw::fp8_over_bf16(gpu.model) > 0:
// the caller checks).
[[nodiscard]] LayerKernels layer_kernels(const TrainingJob& job, double tokens, int tp, const ComputeModel& compute,
                                         const topo::GpuSpec& gpu);
// The loss's softmax and gradient over the logits (a vocabulary share of 1 / tp), in `chunks` pieces.
[[nodiscard]] double loss_seconds(const ModelSpec& model, double tokens, int tp, int chunks, int dtype_bytes,
                                  const ComputeModel& compute, const topo::GpuSpec& gpu);

// Tensor parallelism's collectives (tp_collectives.cpp): per decoder layer, as Megatron-LM runs
// them with sequence parallelism, the seconds left on the critical path.
struct TensorParallelTime {
  double forward_per_layer = 0;        // exposed in the forward (and again in a dense recompute)
  double backward_per_layer = 0;       // exposed in the backward
  double forward_bytes_per_layer = 0;  // sent per GPU, for the traffic totals
  double backward_bytes_per_layer = 0;
};
[[nodiscard]] TensorParallelTime tensor_parallel_time(const TrainingJob& job, int tp, double tokens,
                                                      const LayerKernels& kernels, const topo::Topology& topology,
                                                      const CommModel& comm);

// Bytes each GPU moves over PCIe to and from its host per offloaded optimizer step (0 without
// offload): the shard's bf16 gradients down, its bf16 parameters back.
[[nodiscard]] double offload_bytes(const TrainingJob& job, const ZeroConfig& zero, const topo::Topology& topology);

}  // namespace burst::sim
