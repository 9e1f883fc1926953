// TorchTitan: a job config TOML (torchtitan/config/job_config.py, v0.2.0), the sections
// [model], [training], [parallelism] and [activation_checkpoint]. A model is a registered
// TrainSpec's flavour: where the plan's model has the dimensions of one of TorchTitan's Llama 3
// flavours (torchtitan/models/llama3/__init__.py, llama3_configs at v0.2.0: 8B, 70B, 405B; the MLP
// width is ffn_dim_multiplier x 8 dim / 3 rounded up to multiple_of), [model] names it; otherwise
// the file says so and gives the ModelArgs a user registers as a flavour of their own.
//
// Context parallelism is PyTorch's experimental context_parallel: context_parallel_degree
// ranks, K,V rotated by "alltoall" (shard by shard, the ring) or "allgather" (all shards at
// once after the first block); the ring is what a plan runs. FSDP2 shards over the
// data-parallel x context-parallel ranks: fsdp_reshard_after_forward "default" is ZeRO-3,
// "never" keeps parameters gathered between forward and backward. attn_stash is the per-op
// selective mode, which saves attention outputs (and every other matmul output).
#include <fmt/format.h>

#include "common/escape.hpp"
#include "planner/detail/export/writers.hpp"

namespace burst::exporter {

namespace {

// TorchTitan's Llama 3 flavours (v0.2.0 llama3_configs), by the dimensions burst's model spec has.
struct Flavour {
  const char* name;
  int layers, hidden, heads, kv_heads, ffn;
};
constexpr Flavour kLlama3Flavours[] = {
    {"8B", 32, 4096, 32, 8, 14336}, {"70B", 80, 8192, 64, 8, 28672}, {"405B", 126, 16384, 128, 8, 53248}};

const Flavour* llama3_flavour(const ModelSpec& m) {
  // TorchTitan's flavours: RoPE base 500000, no biases.
  if (!m.gated_mlp || m.activation != "silu" || m.head_dim * m.heads != m.hidden || m.rope_base != 500000 ||
      m.qkv_bias) {
    return nullptr;
  }
  for (const Flavour& f : kLlama3Flavours) {
    if (f.layers == m.layers && f.hidden == m.hidden && f.heads == m.heads && f.kv_heads == m.kv_heads &&
        f.ffn == m.ffn) {
      return &f;
    }
  }
  return nullptr;
}

std::string model_section(const ModelSpec& m) {
  std::string t = "[model]\n";
  if (const Flavour* f = llama3_flavour(m)) {
    t += fmt::format("name = {}\n", escape::toml_string("llama3"));
    t += fmt::format("flavor = {}\n", escape::toml_string(f->name));
    t += fmt::format("# the vocabulary is the tokenizer's (hf_assets_path); the plan's model has {}\n", m.vocab);
    return t;
  }
  t += fmt::format(
      "# not one of TorchTitan's Llama 3 flavours: register a flavour with these ModelArgs in your TrainSpec\n"
      "# (torchtitan/models/llama3/__init__.py shows how): dim={}, n_layers={}, n_heads={}, n_kv_heads={}, "
      "vocab_size={}, rope_theta={},\n# and ffn_dim_multiplier / multiple_of giving an MLP width of {}{}; then set "
      "name and flavor here\n",
      m.hidden, m.layers, m.heads, m.kv_heads, m.vocab, rope_base_text(m.rope_base), m.ffn,
      m.gated_mlp && m.activation == "silu" ? ""
                                            : fmt::format(" (TorchTitan's Llama is gated SiLU; this model is {} {})",
                                                          m.gated_mlp ? "gated" : "plain", m.activation));
  if (m.qkv_bias) t += "# the model has biases on Q, K and V, which TorchTitan's Llama attention has not: add them\n";
  return t;
}

}  // namespace

std::string write_torchtitan(const ExportInput& in) {
  const plan::Plan& p = in.plan;
  const plan::Strategy& s = in.strategy;
  const ModelSpec& m = p.job.model;
  std::vector<std::string> header =
      header_lines(in, "use: torchrun ... -m torchtitan.train --job.config_file <this file>");
  if (in.fp8_linears) {
    header.emplace_back(
        "note: linears: torchao's float8 casts are priced as its eager code runs them; torch.compile ([compile] "
        "enable = true, as TorchTitan's published FP8 runs) fuses some of them, which this file leaves as you set "
        "it");
  }
  std::string t;
  t += model_section(m);
  // torchao's float8 linears: the converter registered as "quantize.linear.float8"
  // (torchtitan/components/quantization/float8.py:237 at v0.2.0), the LM head ("output") left in
  // bf16 as llama3_405b.toml does and as the plan prices it.
  if (in.fp8_linears) t += fmt::format("converters = [{}]\n", escape::toml_string("quantize.linear.float8"));
  t += "\n[training]\n";
  t += fmt::format("seq_len = {}\n", p.job.seq);
  t += fmt::format("local_batch_size = {}\n", s.micro_batch);
  t += fmt::format("global_batch_size = {}\n", p.job.batch);
  t += fmt::format("mixed_precision_param = {}\n", escape::toml_string(p.job.dtype == "fp32" ? "float32" : "bfloat16"));
  t += fmt::format("enable_cpu_offload = {}\n", s.zero.offload ? "true" : "false");
  if (s.zero.offload)
    t += "# enable_cpu_offload moves parameters and gradients to the CPU too, not only the optimizer\n";
  t += "\n[parallelism]\n";
  t += "data_parallel_replicate_degree = 1\n";
  t += fmt::format("data_parallel_shard_degree = {}\n", s.dp);  // FSDP over the replicas and the CP ranks
  t += fmt::format("tensor_parallel_degree = {}\n", s.tp);
  t += "pipeline_parallel_degree = 1\n";
  t += fmt::format("context_parallel_degree = {}\n", s.cp);
  t += fmt::format("context_parallel_rotate_method = {}\n", escape::toml_string("alltoall"));
  t += fmt::format("fsdp_reshard_after_forward = {}\n", escape::toml_string(s.zero.stage == 3 ? "default" : "never"));
  t += "\n[activation_checkpoint]\n";
  if (s.checkpoint.policy == CheckpointPolicy::AttnStash) {
    t += fmt::format("mode = {}\n", escape::toml_string("selective"));
    t += fmt::format("selective_ac_option = {}\n", escape::toml_string("op"));
    t += "# per-op selective saves the attention outputs as attn_stash does, and every other matmul output too\n";
  } else {
    const bool full = s.checkpoint.policy == CheckpointPolicy::Full;
    t += fmt::format("mode = {}\n", escape::toml_string(full ? "full" : "none"));
  }
  if (in.fp8_linears) {
    t += "\n[quantize.linear.float8]\n";
    t += fmt::format("filter_fqns = [{}]\n", escape::toml_string("output"));
  }
  return commented(header, "# ") + "\n" + t;
}

}  // namespace burst::exporter
