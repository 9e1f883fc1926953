// TorchTitan: a job config TOML (torchtitan/config/job_config.py, v0.2.0), the sections
// [training], [parallelism] and [activation_checkpoint]; the model ([model] name and flavor) is
// TorchTitan's registry's, so the file names the dimensions to pick it by.
//
// Context parallelism is PyTorch's experimental context_parallel: context_parallel_degree
// ranks, K,V rotated by "alltoall" (shard by shard, the ring) or "allgather" (all shards at
// once after the first block); the ring is what a plan runs. FSDP2 shards over the
// data-parallel x context-parallel ranks: fsdp_reshard_after_forward "default" is ZeRO-3,
// "never" keeps parameters gathered between forward and backward. attn_stash is the per-op
// selective mode, which saves attention outputs (and every other matmul output).
#include <fmt/format.h>

#include "common/escape.hpp"
#include "planner/export/writers.hpp"

namespace burst::exporter {

std::string write_torchtitan(const ExportInput& in) {
  const plan::Plan& p = in.plan;
  const plan::Strategy& s = in.strategy;
  const ModelSpec& m = p.job.model;
  std::vector<std::string> header =
      header_lines(in, "use: torchrun ... -m torchtitan.train --job.config_file <this file>, after setting [model]");
  std::string t;
  t += "[model]\n";
  t += fmt::format(
      "# name and flavor: TorchTitan's model with {} layers, hidden {}, FFN {}, {} heads ({} KV) of {}, "
      "vocabulary {}\n",
      m.layers, m.hidden, m.ffn, m.heads, m.kv_heads, m.head_dim, m.vocab);
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
  return commented(header, "# ") + "\n" + t;
}

}  // namespace burst::exporter
