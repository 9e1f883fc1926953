// Megatron-LM: pretrain_gpt.py arguments (megatron/training/arguments.py, core_v0.14.0) as a
// bash array, one argument and its values a line, so the file is sourced and its array passed
// on: torchrun ... pretrain_gpt.py "${MEGATRON_ARGS[@]}" plus data, tokenizer and optimizer.
//
// Context parallelism (TransformerEngine attention): p2p is the ring, a2a the Ulysses head
// split, a2a+p2p both, with --hierarchical-context-parallel-sizes U R (adjacent ranks form the
// a2a groups, as the plan's Ulysses groups of consecutive ranks). Recompute: full is
// --recompute-granularity full --recompute-method uniform --recompute-num-layers 1 (every
// layer's input kept, the layer recomputed). ZeRO: 1 the distributed optimizer; 2 and 3
// Megatron FSDP (--data-parallel-sharding-strategy optim_grads, optim_grads_params) on top of it,
// which checkpoints only as fsdp_dtensor; the CPU optimizer needs the precision-aware optimizer,
// which needs the distributed optimizer (megatron/core/optimizer/optimizer_config.py). The model:
// RoPE (--position-embedding-type rope and the model's --rotary-base; Megatron's default is a
// learned table of seq x hidden), RMSNorm and no biases but the Q, K, V ones a Qwen2 model has
// (--add-qkv-bias), as the Llama-style models burst plans are.
#include <fmt/format.h>

#include "planner/detail/export/writers.hpp"

namespace burst::exporter {
namespace {

class MegatronArgs {
 public:
  void add(const std::string& flag, const std::string& values = {}) {
    text_ += "  " + flag + (values.empty() ? "" : " " + values) + "\n";
  }
  void add(const std::string& flag, std::int64_t value) { add(flag, std::to_string(value)); }
  [[nodiscard]] const std::string& text() const { return text_; }

 private:
  std::string text_;
};

}  // namespace

std::string write_megatron(const ExportInput& in) {
  const plan::Plan& p = in.plan;
  const plan::Strategy& s = in.strategy;
  const ModelSpec& m = p.job.model;
  std::vector<std::string> header = header_lines(
      in,
      "use: source this file; torchrun ... pretrain_gpt.py \"${MEGATRON_ARGS[@]}\" plus your data, tokenizer "
      "and optimizer arguments");
  MegatronArgs a;
  a.add("--tensor-model-parallel-size", s.tp);
  if (s.tp > 1) a.add("--sequence-parallel");
  a.add("--pipeline-model-parallel-size", 1);
  a.add("--context-parallel-size", static_cast<std::int64_t>(s.cp) * s.ulysses);
  if (s.cp > 1 && s.ulysses > 1) {
    a.add("--cp-comm-type", "a2a+p2p");
    a.add("--hierarchical-context-parallel-sizes", fmt::format("{} {}", s.ulysses, s.cp));
  } else if (s.ulysses > 1) {
    a.add("--cp-comm-type", "a2a");
  } else if (s.cp > 1) {
    a.add("--cp-comm-type", "p2p");
  }
  a.add("--seq-length", p.job.seq);
  a.add("--max-position-embeddings", p.job.seq);
  a.add("--micro-batch-size", s.micro_batch);  // per data-parallel replica; the data-parallel size is
                                               // what is left of the world: the plan's dp
  a.add("--global-batch-size", p.job.batch);
  a.add("--num-layers", m.layers);
  a.add("--hidden-size", m.hidden);
  a.add("--ffn-hidden-size", m.ffn);
  a.add("--num-attention-heads", m.heads);
  a.add("--kv-channels", m.head_dim);
  if (m.kv_heads < m.heads) {
    a.add("--group-query-attention");
    a.add("--num-query-groups", m.kv_heads);
  }
  if (m.gated_mlp && m.activation == "silu") {
    a.add("--swiglu");
  } else if (m.gated_mlp || m.activation != "gelu") {
    header.push_back(
        fmt::format("note: model: a {} {} MLP has no Megatron flag (--swiglu is gated SiLU, the default "
                    "plain GeLU); choose it in your model spec",
                    m.gated_mlp ? "gated" : "plain", m.activation));
  }
  // A Llama-style model: RoPE instead of Megatron's default learned position table (which at 1M
  // positions would add seq x hidden parameters), RMSNorm, no biases.
  a.add("--position-embedding-type", "rope");
  a.add("--rotary-base", rope_base_text(m.rope_base));
  a.add("--normalization", "RMSNorm");
  a.add("--disable-bias-linear");
  if (m.qkv_bias) a.add("--add-qkv-bias");
  a.add("--untie-embeddings-and-output-weights");
  if (p.job.dtype == "bf16") a.add("--bf16");
  if (p.job.dtype == "fp16") a.add("--fp16");
  // TransformerEngine's FP8 GEMMs, E4M3 forward and E5M2 backward (arguments.py:1219 at core_v0.14.0;
  // examples/llama/train_llama3_8b_h100_fp8.sh writes the same).
  if (in.fp8_linears) a.add("--fp8-format", "hybrid");
  if (s.checkpoint.policy == CheckpointPolicy::Full) {
    a.add("--recompute-granularity", "full");
    a.add("--recompute-method", "uniform");
    a.add("--recompute-num-layers", 1);
  }
  // The distributed optimizer is ZeRO-1, the base of Megatron FSDP's stages and what the
  // precision-aware CPU optimizer requires (optimizer_config.py asserts it).
  if (s.zero.stage >= 1 || s.zero.offload) a.add("--use-distributed-optimizer");
  if (s.zero.stage >= 2) {
    a.add("--use-megatron-fsdp");
    a.add("--data-parallel-sharding-strategy", s.zero.stage == 2 ? "optim_grads" : "optim_grads_params");
    a.add("--ckpt-format", "fsdp_dtensor");
    header.emplace_back("note: zero: Megatron FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset or above 1");
  }
  if (s.zero.offload) {
    a.add("--optimizer-cpu-offload");
    a.add("--use-precision-aware-optimizer");
  }
  return commented(header, "# ") + "MEGATRON_ARGS=(\n" + a.text() + ")\n";
}

}  // namespace burst::exporter
