// NeMo 1.0's route (burst export --nemo-version 1; NeMo 2's recipe is writer_nemo_recipe.cpp):
// overrides of examples/nlp/language_modeling/conf/megatron_gpt_config.yaml (v2.4.0) as a
// YAML document of the same shape, trainer: and model: (merge it over the shipped file, or give
// the keys as Hydra overrides: ++model.context_parallel_size=32 ...; NeMo's config is a struct,
// so a key the shipped file lacks needs '+', and '++' adds or replaces either way).
//
// Every model key here is read by MegatronBaseModel: the parallel sizes by its parallel-state
// set-up, the rest copied into Megatron Core's TransformerConfig by name (cp_comm_type among
// them). Recompute: activations_checkpoint_granularity full, method uniform, 1 layer. ZeRO: 0
// fused_adam; 2 distributed_fused_adam (optimizer states and gradients sharded); 3 torch FSDP
// (fsdp: true, fsdp_sharding_strategy: full). The model: RoPE, RMSNorm, no biases, and
// transformer_engine: true, which context parallelism needs ("Context parallelism is only
// supported by TEDotProductAttention!", nemo/collections/nlp/models/language_modeling/
// megatron_gpt_model.py) and the shipped file leaves false.
#include <fmt/format.h>

#include "common/escape.hpp"
#include "planner/detail/export/writers.hpp"

namespace burst::exporter {
namespace {

std::string nemo_precision(const std::string& dtype) {
  if (dtype == "bf16") return "bf16";
  if (dtype == "fp16") return "16";
  return "32";
}

std::string nemo_yaml(const ExportInput& in) {
  const plan::Plan& p = in.plan;
  const plan::Strategy& s = in.strategy;
  const ModelSpec& m = p.job.model;
  std::vector<std::string> header =
      header_lines(in,
                   "use: merge over megatron_gpt_config.yaml, or pass each key as a Hydra override "
                   "(++model.context_parallel_size=..., '++' since NeMo's config is a struct) to "
                   "megatron_gpt_pretraining.py");
  const int ranks = s.cp * s.ulysses;
  const bool full = s.checkpoint.policy == CheckpointPolicy::Full;
  if (m.qkv_bias) {
    header.emplace_back(
        "note: model: it has biases on Q, K and V only; this YAML's bias: false leaves them out (bias: true would add "
        "them to every linear layer): add them in your model code, or use the NeMo 2 recipe (add_qkv_bias)");
  }
  std::string activation = "gelu";
  if (m.gated_mlp && m.activation == "silu") {
    activation = "fast-swiglu";
  } else if (m.gated_mlp && m.activation == "gelu") {
    activation = "fast-geglu";
  }
  std::string y;
  y += "trainer:\n";
  y += fmt::format("  devices: {}\n", in.ranks_per_node);
  y += fmt::format("  num_nodes: {}\n", in.nodes);
  y += fmt::format("  precision: {}\n", nemo_precision(p.job.dtype));
  y += "model:\n";
  y += fmt::format("  micro_batch_size: {}\n", s.micro_batch);
  y += fmt::format("  global_batch_size: {}\n", p.job.batch);
  y += fmt::format("  tensor_model_parallel_size: {}\n", s.tp);
  y += "  pipeline_model_parallel_size: 1\n";
  y += fmt::format("  context_parallel_size: {}\n", ranks);
  if (ranks > 1) y += fmt::format("  cp_comm_type: {}\n", escape::yaml_scalar(s.ulysses > 1 ? "a2a" : "p2p"));
  y += fmt::format("  sequence_parallel: {}\n", s.tp > 1 ? "true" : "false");
  y += fmt::format("  encoder_seq_length: {}\n", p.job.seq);
  y += fmt::format("  max_position_embeddings: {}\n", p.job.seq);
  y += fmt::format("  num_layers: {}\n", m.layers);
  y += fmt::format("  hidden_size: {}\n", m.hidden);
  y += fmt::format("  ffn_hidden_size: {}\n", m.ffn);
  y += fmt::format("  num_attention_heads: {}\n", m.heads);
  y += fmt::format("  num_query_groups: {}\n", m.kv_heads < m.heads ? std::to_string(m.kv_heads) : "null");
  // megatron_gpt_config.yaml's fp8 (TransformerEngine's FP8 GEMMs), fp8_hybrid true by default.
  if (in.fp8_linears) y += "  fp8: true\n";
  y += fmt::format("  kv_channels: {}\n", m.head_dim);
  y += fmt::format("  activation: {}\n", escape::yaml_scalar(activation));
  y += "  share_embeddings_and_output_weights: false\n";
  y += "  transformer_engine: true\n";
  y += fmt::format("  position_embedding_type: {}\n", escape::yaml_scalar("rope"));
  y += fmt::format("  rotary_base: {}\n", rope_base_text(m.rope_base));
  y += fmt::format("  normalization: {}\n", escape::yaml_scalar("rmsnorm"));
  y += "  bias: false\n";
  y += fmt::format("  activations_checkpoint_granularity: {}\n", full ? escape::yaml_scalar("full") : "null");
  y += fmt::format("  activations_checkpoint_method: {}\n", full ? escape::yaml_scalar("uniform") : "null");
  y += fmt::format("  activations_checkpoint_num_layers: {}\n", full ? "1" : "null");
  y += fmt::format("  fsdp: {}\n", s.zero.stage == 3 ? "true" : "false");
  if (s.zero.stage == 3) y += fmt::format("  fsdp_sharding_strategy: {}\n", escape::yaml_scalar("full"));
  y += "  optim:\n";
  y += fmt::format("    name: {}\n", escape::yaml_scalar(s.zero.stage == 2 ? "distributed_fused_adam" : "fused_adam"));
  return commented(header, "# ") + y;
}

}  // namespace

std::string write_nemo(const ExportInput& in) { return in.nemo_version == 1 ? nemo_yaml(in) : write_nemo_recipe(in); }

}  // namespace burst::exporter
