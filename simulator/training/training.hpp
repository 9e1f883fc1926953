// A whole training iteration of a decoder-only transformer under one strategy: its time on the
// critical path, broken down, and its memory per GPU, itemised.
//
// Time. Every layer is the same, so one attention layer is simulated (forward and backward,
// lowered per strategy, see simulator/layer_simulation.hpp) and the rest of the layer is costed
// kernel by kernel with the compute model (layer_kernels.cpp: GEMMs at the block of their
// shape, norms, RoPE, residual adds and activations by the bytes they move):
//   QKV and output projections, MLP (gated: three matrices, else two), 2 FLOPs per parameter
//   per local token forward, twice that backward; the LM head 2*hidden*vocab per token forward,
//   twice that backward, plus one more forward when it is fused in chunks (logits recomputed);
//   recompute per checkpoint policy: full -> dense forward + attention forward again; attn_stash
//   -> dense forward only; seq_stash(f) -> dense forward + the attention forward of the part not
//   kept (pair fraction of the mask for the earliest (1 - f) of the sequence: (1 - f)^2 causal);
//   none -> nothing;
//   ZeRO: stage 3 all-gathers parameters (bf16) in forward and again in backward and
//   reduce-scatters gradients (bf16, or fp32 where the framework keeps fp32 main gradients);
//   stages 1-2 reduce-scatter gradients and all-gather updated
//   parameters once (bucketed per layer, the gather prefetched in the forward); stage 0
//   all-reduces gradients in the backward. A ring collective over all P GPUs moves bytes*(P-1)/P per GPU at the
//   slowest hop's bandwidth (inter-node per GPU when there are several nodes). Per-layer
//   collectives are prefetched behind the previous layer's compute: only what exceeds it is
//   exposed;
//   optimizer: on GPU, AdamW streams 16 bytes of state per parameter of the shard through HBM
//   twice; offloaded, the shard's gradients go to the host and parameters come back over
//   PCIe and the CPU runs Adam (docs/iteration-model.md has the rates).
//
// Memory (bytes per GPU, P GPUs, c = seq*batch/P local tokens, e = 2 bytes for bf16):
//   params e*N / (stage 3 ? P : 1) + ZeRO-3 gather buffers for two layers in flight;
//   gradients e*N (4*N with an fp32 main-gradient buffer) / (stage >= 2 ? P : 1), plus the
//   framework's fixed reduce bucket; optimizer 12*N / (stage >= 1 ? P : 1) (fp32 master,
//   m, v), 0 on the GPU when offloaded; activations per policy (what each layer keeps for its
//   backward, plus one layer's full working set during backward); attention stash (O and lse
//   kept by attn_stash / seq_stash); ring buffers (double-buffered blocks of the forward and
//   backward rings, per ring level, and Ulysses all-to-all buffers); LM head and loss
//   workspace (the logits of one chunk of c / chunks tokens and the fp32 buffers of their
//   shape the framework's loss holds beside them: burst's softmax and gradient); reserve
//   (CUDA context, framework and allocator fragmentation).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "common/json_reader.hpp"
#include "common/parallelism.hpp"
#include "common/strategy_knobs.hpp"
#include "simulator/attention/attention.hpp"
#include "simulator/layer_simulation.hpp"
#include "simulator/models/model.hpp"
#include "topologies/topology.hpp"

namespace burst::sim {

// The precision of the decoder layers' linear layers (their GEMMs). FP8 is what
// TransformerEngine's fp8_autocast (NeMo, Megatron-LM) and torchao's float8 (TorchTitan) run:
// the projections and the MLP in FP8 on FP8 tensor cores, each GEMM's input and output gradient
// cast to FP8 with its transpose, the LM head, attention and everything else as before.
enum class LinearPrecision : std::uint8_t { Bf16, Fp8 };
// As a plan's /job/linears says it: "fp8", or "" for the job's dtype (linear_precision.cpp).
[[nodiscard]] std::string plan_linears(LinearPrecision linears);
// The inverse, "bf16" also meaning the job's dtype; throws burst::Error naming `where` otherwise.
[[nodiscard]] LinearPrecision parse_linears(std::string_view text, const std::string& where);
// Why a GPU cannot run FP8 linear layers, as a problem at `where`, or nothing when it can.
[[nodiscard]] std::optional<Problem> fp8_linears_problem(const topo::GpuSpec& gpu, const std::string& where);

// The library that runs FP8 linear layers, which sets what they cost beside the GEMMs
// (docs/iteration-model.md, "FP8 linear layers", has each item's source):
//   TransformerEngine (Megatron-LM, NeMo; what burst plans price): each GEMM's input cast once
//     with its transpose and kept for the backward in FP8, each output gradient likewise; the
//     weights cast once a step and kept, with their transposes, across its micro-batches (not
//     under ZeRO-3); tensor parallelism's all-gathers in FP8;
//   Torchao (TorchTitan's float8, tensorwise dynamic scaling): every cast an amax pass and a
//     cast pass, the input's and the weight's cast again for the backward and the output
//     gradient cast twice; inputs kept in bf16, no weight copies kept; tensor parallelism's
//     all-gathers in the activation dtype.
enum class Fp8Library : std::uint8_t { TransformerEngine, Torchao };
[[nodiscard]] std::string_view to_string(Fp8Library library);  // "transformer-engine", "torchao"
// The inverse; throws burst::Error naming `where` otherwise.
[[nodiscard]] Fp8Library parse_fp8_library(std::string_view text, const std::string& where);

struct TrainingJob {
  ModelSpec model;
  std::int64_t seq = 0;  // tokens per sequence
  int batch = 1;         // sequences per optimizer step: the global batch (TrainingKnobs::dp, micro_batch split it)
  Mask mask;
  int dtype_bytes = 2;  // bf16 parameters and activations
  LinearPrecision linears = LinearPrecision::Bf16;
  Fp8Library fp8_library = Fp8Library::TransformerEngine;  // who runs FP8 `linears`
};

// The training knobs (checkpoint, lm_head_chunks, zero: common/strategy_knobs.hpp), the
// attention strategy, and how the family's framework allocates memory.
struct TrainingStrategy : TrainingKnobs {
  AttentionStrategy attention;
  FrameworkMemory memory;  // the family's row (families.hpp); burst's by default
};

// The family's training defaults as used in practice (docs/strategies.md): the attention
// preset plus its checkpointing, LM head and optimizer sharding. For "burst" and "burst-usp"
// these are the starting point the planner searches from.
[[nodiscard]] TrainingStrategy training_preset(std::string_view family, const TrainingJob& job,
                                               const topo::Topology& topology);
// The same with tensor parallelism of `tp` and `dp` data-parallel replicas (its attention world
// and local tokens), each replica running one sequence at a time (micro_batch 1).
[[nodiscard]] TrainingStrategy training_preset(std::string_view family, const TrainingJob& job,
                                               const topo::Topology& topology, int tp, int dp = 1);

struct MemoryBreakdown {  // bytes per GPU
  double params = 0;
  double fp8_weights = 0;  // TransformerEngine's FP8 copies of the linear weights (memory_model.cpp)
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double attention_stash = 0;
  double ring_buffers = 0;
  double lm_head = 0;
  double reserve = 0;
  [[nodiscard]] double total() const;
};

struct TimeBreakdown {                // seconds per iteration on the critical path; they sum to step_time_s
  double dense_compute = 0;           // projections and MLP GEMMs, forward and backward
  double elementwise = 0;             // norms, RoPE, residual adds, activation, D, the loss's softmax
  double attention_compute = 0;       // attention kernels, forward and backward (busiest rank)
  double attention_exposed_comm = 0;  // ring / all-to-all time not hidden behind compute
  double recompute = 0;
  double lm_head = 0;
  double zero_exposed_comm = 0;
  double tp_exposed_comm = 0;  // tensor parallelism's all-gathers and reduce-scatters not hidden by GEMMs
  double optimizer = 0;
  [[nodiscard]] double total() const;
};

struct IterationSimulation {
  TrainingStrategy strategy;
  std::string not_applicable;  // non-empty: cannot run here at all (heads, divisibility...)
  LayerSimulation attention;   // one layer
  TimeBreakdown time;
  MemoryBreakdown memory;
  double step_time_s = 0;
  // The step's forward and backward passes as the runtime times them (every micro-batch): the
  // layers' dense work and attention phases and the LM head with its loss; the backward with
  // the recompute. ZeRO's exposed collectives and the optimizer are outside both.
  double forward_s = 0;
  double backward_s = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;               // model FLOPs (no recompute) / (step time x GPUs x peak)
  double model_flops = 0;       // per iteration, all GPUs: 3 x forward (dense + attention + LM head)
  double comm_bytes_intra = 0;  // per GPU per iteration, bytes crossing NVLink / PCIe / shm
  double comm_bytes_inter = 0;  // per GPU per iteration, bytes crossing the network
};

[[nodiscard]] MemoryBreakdown estimate_memory(const TrainingJob& job, const TrainingStrategy& strategy,
                                              const topo::Topology& topology);

// What MemoryBreakdown::reserve is made of (reserve_model.cpp gives each part's sources): the
// CUDA context, cuBLAS's workspaces, the buffers of the NCCL communicators the strategy uses, and
// the caching allocator's fragmentation of the `allocated` bytes. All 0 on CPU ranks.
struct ReserveParts {
  double context = 0, workspaces = 0, nccl = 0, fragmentation = 0;
  int communicators = 0;  // NCCL communicators holding buffers
  [[nodiscard]] double total() const;
};
[[nodiscard]] ReserveParts estimate_reserve(const TrainingStrategy& strategy, const topo::Topology& topology,
                                            double allocated);

// Never throws for a strategy that does not apply: not_applicable says why.
[[nodiscard]] IterationSimulation simulate_iteration(const TrainingJob& job, const TrainingStrategy& strategy,
                                                     const topo::Topology& topology, const LayerSimOptions& options);
// The same with the attention layer already simulated for strategy.attention (the planner
// shares one layer simulation among every candidate with the same attention knobs).
[[nodiscard]] IterationSimulation simulate_iteration(const TrainingJob& job, const TrainingStrategy& strategy,
                                                     const topo::Topology& topology, const LayerSimOptions& options,
                                                     const LayerSimulation& attention);

// Building blocks of the two models, for the planner and the tests.

// Tensor parallelism's sequence-parallel collectives as bytes each GPU sends per decoder layer
// (tp_collectives.cpp), each of c h (tp - 1) / tp elements for the context-parallel rank's c
// `tokens`: 2 all-gathers and 2 reduce-scatters in the forward, 4 and 2 in the backward; an
// all-gather's elements are FP8 under TransformerEngine's FP8 linears, everything else in the
// activation dtype; zero at tp 1.
struct TensorParallelBytes {
  double all_gather = 0, reduce_scatter = 0;  // one collective's
  [[nodiscard]] double forward_per_layer() const { return 2 * all_gather + 2 * reduce_scatter; }
  [[nodiscard]] double backward_per_layer() const { return 4 * all_gather + 2 * reduce_scatter; }
};
[[nodiscard]] TensorParallelBytes tensor_parallel_bytes(const TrainingJob& job, int tp, double tokens);

// The attention layer of one micro-batch of the job (its heads, sequence, dtype) as the knobs'
// parallelism runs it: heads / tp and kv_heads / tp per tensor-parallel rank (rounded down where
// tp does not divide them, which check_training refuses), micro_batch sequences per replica,
// dp replicas.
[[nodiscard]] AttentionShape attention_shape(const TrainingJob& job, const TrainingKnobs& knobs);
// Tokens each context-parallel rank (a tensor-parallel group of tp GPUs) carries through the
// dense layers per micro-batch: seq * micro_batch / (gpu_count / (tp dp)); between the linear
// layers each of its GPUs holds 1 / tp of them (sequence parallelism).
[[nodiscard]] double local_tokens(const TrainingJob& job, const topo::Topology& topology, const TrainingKnobs& knobs);
// Micro-batches per optimizer step on each replica: batch / (dp micro_batch) (at least 1).
[[nodiscard]] int accumulation_steps(const TrainingJob& job, const TrainingKnobs& knobs);
// Why the strategy cannot train this job here ("" if it can): check_applicable's reasons plus
// the checkpointing, LM head and ZeRO settings.
[[nodiscard]] std::string check_training(const TrainingJob& job, const TrainingStrategy& strategy,
                                         const topo::Topology& topology);
// Share of one attention forward (its FLOPs) run again in the backward: full 1; seq_stash the
// allowed pairs of the earliest (1 - kept_fraction) * seq queries against every key over all
// allowed pairs ((1 - f)^2 causal); none and attn_stash 0.
[[nodiscard]] double attention_recompute_fraction(const Mask& mask, std::int64_t seq,
                                                  const CheckpointConfig& checkpoint);
// Bytes each elementwise kernel of one decoder layer moves (layer_kernels.cpp has the list), at
// `tokens` tokens split over `tp` tensor-parallel GPUs and `dtype_bytes` bytes an element: what
// the model prices them by, and what `burst calibrate` divides a CPU rank's measured time into.
struct LayerElementwiseBytes {
  std::array<double, 6> forward{};   // norm, RoPE, residual add, norm, activation, residual add
  std::array<double, 7> backward{};  // two norms, RoPE, activation, two residual adds, D
  [[nodiscard]] double total() const;
};
[[nodiscard]] LayerElementwiseBytes layer_elementwise_bytes(const ModelSpec& model, double tokens, int tp,
                                                            int dtype_bytes);
// Seconds of one optimizer step on the critical path (docs/iteration-model.md has the rates).
[[nodiscard]] double optimizer_seconds(const TrainingJob& job, const ZeroConfig& zero, const topo::Topology& topology,
                                       const CommModel& comm);

[[nodiscard]] Json to_json(const MemoryBreakdown& memory);  // every item and "total"
[[nodiscard]] Json to_json(const TimeBreakdown& time);      // every item and "total"

}  // namespace burst::sim
