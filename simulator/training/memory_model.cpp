// Memory per GPU of one training iteration, at its peak (the backward of the first layers).
//
// Model state, N parameters over P GPUs, e bytes per bf16 element (mixed-precision AdamW):
//   params     e*N, divided by P under ZeRO-3, which then holds two layers' parameters unsharded
//              while they are gathered (the layer computing and the one prefetched);
//   gradients  e*N, or 4*N where the framework accumulates into an fp32 main-gradient buffer
//              (Megatron), divided by P from ZeRO-2 on, plus the framework's fixed reduce
//              bucket (DeepSpeed ZeRO-3: 5e8 elements of e bytes);
//   optimizer  fp32 master, m and v: 12*N, divided by P from ZeRO-1 on; on the host if offloaded.
// The strategy's FrameworkMemory (its family's row, attention/families.hpp) says how its
// framework allocates; docs/strategies.md gives each value's source.
// Activations, c = seq * micro_batch / (P / D) tokens per GPU (D data-parallel replicas, one
// micro-batch alive at a time: gradient accumulation adds no activations), bytes per token per layer (Llama-style
// layer, flash attention so nothing grows with the square of the sequence):
//   kept by "none" A = e * (input h + attention norm h + Q hq + K,V 2 hkv + O hq + residual h
//                        + MLP norm h + [gated: gate, up 2 ffn + silu(gate) ffn + product ffn;
//                                        else: up ffn + gelu ffn]) + lse 4 * heads,
//                   without silu(gate) where the framework fuses the gated activation
//                   (FrameworkMemory::fused_gated_activation),
//   of which the attention output S = e * hq + 4 * heads (O and lse) is the attention stash;
//   full         L * c * e * h (each layer's input) + one layer's working set 2 * A * c (its
//                activations rebuilt plus their gradients) during that layer's backward;
//   attn_stash   full's, plus the stash L * c * S;
//   seq_stash(f) full's, plus f * L * c * S;
//   none         L * c * A, plus one layer's gradients A * c.
// Ring buffers (ring of R = P / (D U) ranks, c_r = seq * micro_batch / R tokens, heads split U ways):
// double buffering keeps 2 blocks in flight per ring level that exists (a double ring has two,
// one on a single node); a forward
// block is K,V (2 c_r hkv e); a backward block is Q, dO, dQ and D, lse (Q ring) or K, V and
// dK, dV (K,V ring). Forward and backward blocks are never alive together. Ulysses (U > 1) adds
// its all-to-all buffers: the local Q, K, V and O.
// LM head: one chunk of c / chunks tokens holds its logits (e bytes) and the fp32 buffers of
// their shape the framework's loss keeps beside them at its peak: (e + 4 * buffers) * vocab
// bytes per token (burst: the softmax and its gradient, 2; Megatron and InternEvo: one fp32
// copy worked in place, 1; DeepSpeed-Ulysses: the copy, the softmax and its log, 3).
// Reserve: the CUDA context, cuBLAS's workspaces, the NCCL communicators' buffers and the caching
// allocator's fragmentation (reserve_model.cpp; docs/iteration-model.md).
// FP8 linear layers as TransformerEngine runs them (NVIDIA/TransformerEngine @d0067d0d
// transformer_engine/pytorch/module/linear.py and layernorm_linear.py): each GEMM keeps its input
// for the backward in FP8, 1 byte an element: the two norms' outputs (h each) and the MLP's
// output matrix's input (the product, or the GELU's output: f) shrink from e to 1 byte, while
// the output projection keeps an FP8 copy of O beside the bf16 O attention keeps (hq more, not
// part of the stash). Its weights, cast once a step, stay cached with their transposes across the
// step's micro-batches (`_fp8_workspaces["weight"]`, kept while Megatron passes
// `is_first_microbatch`): 2 bytes per local linear weight, `fp8_weights`; not under ZeRO-3
// (`cache_name` is None for FSDP2). torchao's float8 keeps the bf16 inputs and no weight copies
// (pytorch/ao @36027d82 torchao/float8/float8_linear.py: `ctx.save_for_backward(input_hp,
// weight_hp_t)`): nothing changes.
// Tensor parallelism of T (Megatron-LM's, with sequence parallelism): every GPU holds 1 / T of
// each weight, gradient and optimizer state (the vocabulary split too), ZeRO shards those over
// the P / T GPUs holding the same share (the data-parallel replicas included, as Megatron-LM's
// distributed optimizer shards over data x context parallelism), c is the context-parallel
// rank's seq * micro_batch * T D / P tokens, and every activation, stash, ring block and logit chunk divides by T (the
// linear layers' activations by their split width, the norms' by sequence parallelism, attention's by its heads;
// Korthikanti et al. 2022, eq. 5: sbh(10 + 24/t + 5as/(ht)) -> sbh(34 + 5as/h)/t).
#include <algorithm>
#include <cmath>

#include "simulator/attention/ring.hpp"
#include "simulator/detail/training/iteration_parts.hpp"

namespace burst::sim {
namespace {

constexpr double kFp32 = 4;
constexpr double kOptimizerBytesPerParam = 12;  // fp32 master, m, v

struct TokenBytes {
  double all = 0;    // A: what one layer keeps per token when nothing is recomputed
  double stash = 0;  // S: its attention output and lse
};

// `fp8_inputs`: the GEMMs keep their inputs in FP8 (TransformerEngine's FP8 linears);
// `fused_gated`: the gated activation keeps only its input.
TokenBytes layer_token_bytes(const ModelSpec& m, double e, bool fp8_inputs, bool fused_gated) {
  const double h = m.hidden, hq = static_cast<double>(m.heads) * m.head_dim;
  const double hkv = static_cast<double>(m.kv_heads) * m.head_dim, f = m.ffn;
  const double lse = kFp32 * m.heads;
  const double gemm_input = fp8_inputs ? 1 : e;  // the norms' outputs, the MLP output matrix's input
  const double activation_kept = m.gated_mlp ? (fused_gated ? 2 * f : 3 * f) : f;  // gate, up [, silu(gate)]; or up
  const double mlp = e * activation_kept + gemm_input * f;
  TokenBytes t;
  t.stash = e * hq + lse;
  t.all = e * (h + hq + 2 * hkv + h) + 2 * gemm_input * h + mlp + (fp8_inputs ? hq : 0) + t.stash;
  return t;
}

double stash_fraction(const CheckpointConfig& checkpoint) {
  switch (checkpoint.policy) {
    case CheckpointPolicy::None:
    case CheckpointPolicy::AttnStash: return 1;
    case CheckpointPolicy::SeqStash: return std::clamp(checkpoint.kept_fraction, 0.0, 1.0);
    case CheckpointPolicy::Full: break;
  }
  return 0;
}

// The ring levels holding blocks in flight (ring_level_sizes): a double ring on one node holds
// one level's buffers, not two.
double ring_levels(const AttentionStrategy& a, const topo::Topology& topology, int tp, int dp) {
  if (a.ring != RingKind::Double) return 1;
  const World replica = replica_world(topology, tp, dp);
  if (replica.size() == 0) return 2;
  return static_cast<double>(std::max<std::size_t>(1, ring_level_sizes(ring_geometry(a, replica)).size()));
}

double ring_buffer_bytes(const TrainingJob& job, const TrainingStrategy& strategy, const topo::Topology& topology) {
  const AttentionStrategy& a = strategy.attention;
  const int tp = std::max(1, strategy.tp);
  const int u = std::max(1, a.ulysses);
  const int ring = std::max(1, topology.gpu_count() / tp / std::max(1, strategy.dp) / u);
  const ModelSpec& m = job.model;
  const double e = job.dtype_bytes;
  const double heads = static_cast<double>(m.heads) / tp / u;
  const double hq = heads * m.head_dim, hkv = static_cast<double>(m.kv_heads) / tp / u * m.head_dim;
  double bytes = 0;
  if (ring > 1) {
    const double c_ring = static_cast<double>(job.seq) * std::max(1, strategy.micro_batch) / ring;
    const double forward = 2 * hkv * e;
    const double backward = a.backward == BackwardMode::QRing ? 2 * hq * e + hq * a.dq_bytes + 2 * kFp32 * heads
                                                              : 2 * hkv * e + 2 * hkv * a.dkv_bytes;
    const double levels = ring_levels(a, topology, tp, std::max(1, strategy.dp));
    const double in_flight = a.overlap ? 2 : 1;
    bytes += levels * in_flight * c_ring * std::max(forward, backward);
  }
  if (u > 1) {
    const double c = local_tokens(job, topology, strategy);
    const double full_hq = static_cast<double>(m.heads) / tp * m.head_dim;
    const double full_hkv = static_cast<double>(m.kv_heads) / tp * m.head_dim;
    bytes += c * (2 * full_hq + 2 * full_hkv) * e;
  }
  return bytes;
}

}  // namespace

double MemoryBreakdown::total() const {
  return params + fp8_weights + gradients + optimizer + activations + attention_stash + ring_buffers + lm_head +
         reserve;
}

MemoryBreakdown estimate_memory(const TrainingJob& job, const TrainingStrategy& strategy,
                                const topo::Topology& topology) {
  const ModelSpec& m = job.model;
  // Tensor parallelism of T: each GPU holds 1 / T of every weight (the vocabulary split too) and,
  // with sequence parallelism, 1 / T of every activation; ZeRO shards over the P / T GPUs that
  // hold the same share.
  const int tp = std::max(1, strategy.tp);
  const double t = tp;
  const double p = std::max(1, topology.gpu_count() / tp);
  const double n = m.total_params() / t, e = job.dtype_bytes, layers = m.layers;
  const double c = local_tokens(job, topology, strategy);
  const int stage = strategy.zero.stage;

  MemoryBreakdown mem;
  mem.params = e * n / (stage >= 3 ? p : 1) + (stage >= 3 ? 2 * e * m.layer_params() / t : 0);
  const FrameworkMemory& framework = strategy.memory;
  mem.gradients = gradient_bytes(job, framework) * n / (stage >= 2 ? p : 1) + framework.gradient_bucket_elements * e;
  mem.optimizer = strategy.zero.offload ? 0 : kOptimizerBytesPerParam * n / (stage >= 1 ? p : 1);

  const bool transformer_engine_fp8 = fp8_on_transformer_engine(job);
  if (transformer_engine_fp8 && stage < 3) mem.fp8_weights = 2 * layers * (m.layer_params() - 2.0 * m.hidden) / t;

  const TokenBytes token = layer_token_bytes(m, e, transformer_engine_fp8, framework.fused_gated_activation);
  const bool keeps_all = strategy.checkpoint.policy == CheckpointPolicy::None;
  const double kept = keeps_all ? layers * (token.all - token.stash) : layers * e * m.hidden;
  const double working_set = keeps_all ? token.all : 2 * token.all;
  mem.activations = c * (kept + working_set) / t;
  mem.attention_stash = c * layers * token.stash * stash_fraction(strategy.checkpoint) / t;

  mem.ring_buffers = ring_buffer_bytes(job, strategy, topology);
  const double chunk_tokens = std::ceil(c / std::max(1, strategy.lm_head_chunks));
  mem.lm_head = chunk_tokens * static_cast<double>(m.vocab) / t * (e + kFp32 * framework.logits_fp32_buffers);
  mem.reserve = estimate_reserve(strategy, topology, mem.total()).total();
  return mem;
}

}  // namespace burst::sim
