// The frameworks table (see framework.hpp): what each framework can express of a plan, read
// from its sources at the version named (docs/export-and-launch.md cites the files).
#include <algorithm>

#include "common/error.hpp"
#include "common/text.hpp"
#include "planner/export/framework.hpp"
#include "planner/detail/export/writers.hpp"

namespace burst::exporter {
namespace {

using CP = CheckpointPolicy;

// Megatron-LM core_v0.14.0: context parallelism is TransformerEngine's attention (cp_comm_type
// p2p, a2a, allgather, a2a+p2p); recompute is full, or selective of whole submodules.
Framework megatron() {
  Framework f;
  f.name = "megatron";
  f.title = "Megatron-LM";
  f.version = "core_v0.14.0 (23e00ed0, 2025-10-08)";
  f.format = "bash array of pretrain_gpt.py arguments";
  f.can = {.tensor_parallel = true,
           .ring = true,
           .ulysses = true,
           .ulysses_with_ring = true,
           .double_ring = false,
           .layouts = {Layout::Zigzag},
           .backwards = {BackwardMode::KvRing},
           .checkpoints = {CP::None, CP::Full},
           .chunked_lm_head = false,
           .zero_stages = {0, 1, 2, 3},
           .offload = true,
           .fp8_linears = true};
  f.limits = {
      {Knob::Attention,
       "--hierarchical-context-parallel-sizes splits a2a (Ulysses) from p2p (ring); the p2p ring "
       "itself is one flat ring"},
      {Knob::Layout, "it always splits the sequence into 2 x CP chunks, rank r holding r and 2CP-1-r (zigzag)"},
      {Knob::Backward, "TransformerEngine's p2p ring has only the K,V-side backward (dK,dV travel with K,V)"},
      {Knob::Precision, "TransformerEngine sends dK,dV in the activation dtype"},
      {Knob::Overlap, "TransformerEngine's p2p ring always overlaps"},
      {Knob::Checkpoint,
       "--recompute-granularity selective recomputes whole submodules (--recompute-modules); "
       "none keeps the attention output while recomputing the rest, as attn_stash does, and no "
       "flag keeps a fraction of the sequence"},
      {Knob::LmHead,
       "no flag computes the LM head and loss in sequence chunks (--cross-entropy-loss-fusion "
       "fuses the loss, not the logits)"},
  };
  f.write = write_megatron;
  f.allocates_like = "megatron-cp";
  return f;
}

// NeMo v2.4.0, examples/nlp/language_modeling/conf/megatron_gpt_config.yaml: the model keys go to
// Megatron Core's TransformerConfig, but the parallel state NeMo builds has no hierarchical
// context-parallel groups.
Framework nemo() {
  Framework f;
  f.name = "nemo";
  f.title = "NeMo";
  f.version = "v2.4.0 (2381f42f, 2025-07-25)";
  f.format = "a NeMo 2 Python recipe; --nemo-version 1: YAML overrides of megatron_gpt_config.yaml";
  f.can = {.tensor_parallel = true,
           .ring = true,
           .ulysses = true,
           .ulysses_with_ring = false,
           .double_ring = false,
           .layouts = {Layout::Zigzag},
           .backwards = {BackwardMode::KvRing},
           .checkpoints = {CP::None, CP::Full},
           .chunked_lm_head = false,
           .zero_stages = {0, 2, 3},
           .offload = false,
           .fp8_linears = true};
  f.limits = {
      {Knob::Attention,
       "model.cp_comm_type a2a+p2p needs hierarchical context-parallel groups, which NeMo's "
       "parallel-state set-up does not make, and its p2p ring is one flat ring"},
      {Knob::Layout, "Megatron Core splits the sequence into 2 x CP chunks (zigzag)"},
      {Knob::Backward, "TransformerEngine's p2p ring has only the K,V-side backward"},
      {Knob::Precision, "TransformerEngine sends dK,dV in the activation dtype"},
      {Knob::Overlap, "TransformerEngine's p2p ring always overlaps"},
      {Knob::Checkpoint,
       "activations_checkpoint_granularity is full or selective (recompute core attention, the "
       "opposite of keeping it); nothing keeps a fraction of the sequence"},
      {Knob::LmHead, "no key computes the LM head in sequence chunks"},
      {Knob::Zero,
       "optim.name distributed_fused_adam shards optimizer states and gradients (stage 2); fsdp "
       "shards parameters too (stage 3)"},
      {Knob::Offload, "no key offloads the optimizer (cpu_offloading moves activations and weights)"},
  };
  f.write = write_nemo;
  f.allocates_like = "megatron-cp";  // Megatron Core's
  return f;
}

// DeepSpeed v0.18.0: Ulysses sequence parallelism ("sequence_parallel_size") and ZeRO; no ring.
Framework deepspeed() {
  Framework f;
  f.name = "deepspeed";
  f.title = "DeepSpeed";
  f.version = "v0.18.0 (79caae1c, 2025-10-07)";
  f.format = "ds_config JSON";
  f.can = {.tensor_parallel = false,
           .ring = false,
           .ulysses = true,
           .ulysses_with_ring = false,
           .double_ring = false,
           .layouts = {},
           .backwards = {},
           .checkpoints = {CP::None, CP::Full},
           .chunked_lm_head = true,
           .zero_stages = {0, 1, 2, 3},
           .offload = true};
  f.limits = {
      {Knob::TensorParallel,
       "its config has no tensor parallelism (that is the model code's: Megatron-DeepSpeed's mpu), so the "
       "tensor-parallel ranks join the sequence split"},
      {Knob::Attention,
       "its sequence parallelism is Ulysses alone (all-to-all of heads), with no ring, so every "
       "rank joins the head split"},
      {Knob::Checkpoint,
       "what is recomputed is the model code's choice (deepspeed.checkpointing, or the Hugging Face "
       "model's gradient checkpointing): whole layers"},
      {Knob::Linears,
       "its config has no FP8 linear layers (that is the model code's: TransformerEngine's modules), so the "
       "equivalent's GEMMs run in the job's dtype"},
  };
  f.write = write_deepspeed;
  // Not ds-ulysses's row: its 5e8-element ZeRO-3 bucket (1 GB in bf16) would refuse small plans
  // whose exports name no bucket size; said in the note instead.
  f.allocation_note =
      "not DeepSpeed's own: its ZeRO-3 reduce bucket of 5e8 elements (1 GB in bf16) and its loss's three fp32 "
      "logit-sized buffers are not counted (the planner's ds-ulysses row counts them)";
  return f;
}

// TorchTitan v0.2.0: PyTorch's experimental context_parallel (a ring over SDPA, K,V rotated by
// all-gather or all-to-all), FSDP2 over the data-parallel x context-parallel ranks.
Framework torchtitan() {
  Framework f;
  f.name = "torchtitan";
  f.title = "TorchTitan";
  f.version = "v0.2.0 (29624e37, 2025-10-17)";
  f.format = "job config TOML";
  f.can = {.tensor_parallel = true,
           .ring = true,
           .ulysses = false,
           .ulysses_with_ring = false,
           .double_ring = false,
           .layouts = {Layout::Zigzag},
           .backwards = {BackwardMode::KvRing},
           .checkpoints = {CP::None, CP::Full, CP::AttnStash},
           .chunked_lm_head = false,
           .zero_stages = {2, 3},
           .offload = true,
           .fp8_linears = true};
  f.limits = {
      {Knob::Attention, "its context parallelism is one flat ring over SDPA (no head split, no ring of rings)"},
      {Knob::Layout, "PyTorch's context_parallel load-balances a causal ring head-to-tail (zigzag)"},
      {Knob::Backward, "PyTorch's ring attention backward circulates K,V and dK,dV"},
      {Knob::Precision, "the ring sends dK,dV in the activation dtype"},
      {Knob::Overlap, "the ring always overlaps"},
      {Knob::Checkpoint,
       "activation_checkpoint.mode is none, full or selective (per layer or per op); per-op "
       "selective saves attention outputs for every token, not a fraction"},
      {Knob::LmHead, "no setting computes the LM head in sequence chunks"},
      {Knob::Zero,
       "FSDP2 always shards parameters over the context-parallel ranks; "
       "parallelism.fsdp_reshard_after_forward = \"never\" is the nearest to stages 0-2"},
      {Knob::Linears,
       "its FP8 is torchao's float8 (dynamic scaling: every cast an amax pass and a cast, redone for "
       "the backward; the inputs kept in bf16, no FP8 weight copies)"},
  };
  f.write = write_torchtitan;
  f.allocation_note = "burst has no row of TorchTitan's own (docs/strategies.md)";
  f.fp8_library = sim::Fp8Library::Torchao;
  return f;
}

}  // namespace

const char* to_string(Knob knob) {
  switch (knob) {
    case Knob::TensorParallel: return "tensor_parallel";
    case Knob::Attention: return "attention";
    case Knob::Layout: return "layout";
    case Knob::Backward: return "backward";
    case Knob::Precision: return "precision";
    case Knob::Overlap: return "overlap";
    case Knob::Checkpoint: return "checkpoint";
    case Knob::LmHead: return "lm_head";
    case Knob::Zero: return "zero";
    case Knob::Offload: return "offload";
    case Knob::Linears: return "linears";
  }
  return "?";
}

std::string Framework::why_not(Knob knob) const {
  for (const Limit& limit : limits) {
    if (limit.knob == knob) return limit.why;
  }
  return {};
}

const std::vector<Framework>& frameworks() {
  static const std::vector<Framework> table = {megatron(), nemo(), deepspeed(), torchtitan()};
  return table;
}

std::vector<std::string> framework_names() {
  std::vector<std::string> names;
  for (const Framework& f : frameworks()) names.push_back(f.name);
  return names;
}

const Framework& find_framework(std::string_view name, std::string_view field) {
  for (const Framework& f : frameworks()) {
    if (f.name == name) return f;
  }
  throw Error(Problem{std::string(field), "unknown framework '" + std::string(name) + "'",
                      text::join(framework_names()), text::did_you_mean(name, framework_names())});
}

}  // namespace burst::exporter
