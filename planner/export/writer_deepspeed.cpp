// DeepSpeed: a ds_config JSON (v0.18.0). The head split is "sequence_parallel_size", read at
// the top level as DeepSpeed's Ulysses tutorial (docs/_tutorials/ulysses-alst-sequence-
// parallelism.md) passes it, with the Ulysses attention registered by the training script
// (UlyssesSPAttentionHF.register_with_transformers). ZeRO: zero_optimization.stage, the CPU
// optimizer as offload_optimizer {"device": "cpu"}. JSON has no comments, so the header and the
// notes go under "_burst_notes": DeepSpeedConfig reads its top-level keys one by one and ignores
// the others (only sections such as zero_optimization refuse unknown keys).
#include <algorithm>

#include <fmt/format.h>

#include "common/json_reader.hpp"
#include "planner/detail/export/writers.hpp"

namespace burst::exporter {

std::string write_deepspeed(const ExportInput& in) {
  const plan::Plan& p = in.plan;
  const plan::Strategy& s = in.strategy;
  std::vector<std::string> header =
      header_lines(in,
                   "use: mpu = UlyssesSPAttentionHF.register_with_transformers(..., sequence_parallel_size=<the same>, "
                   "micro_batch_size=<train_micro_batch_size_per_gpu>); deepspeed.initialize(config=<this file>, "
                   "model=..., mpu=mpu); wrap the data loader in UlyssesSPDataLoaderAdapter(dl, sp_rank, sp_group, "
                   "sp_world_size, device) so each rank gets its shard of every sequence "
                   "(deepspeed.runtime.sequence_parallel.ulysses_sp)");
  if (s.checkpoint.policy == CheckpointPolicy::Full) {
    header.emplace_back(
        "checkpoint full: the model code recomputes every layer (Hugging Face: "
        "model.gradient_checkpointing_enable(); deepspeed.checkpointing.checkpoint per layer)");
  }
  if (s.lm_head_chunks > 1) {
    header.push_back(
        fmt::format("lm_head: compute the logits and loss with TiledFusedLogitsLoss, shards = {} "
                    "(deepspeed.runtime.sequence_parallel.ulysses_sp); it is code, not a config key",
                    s.lm_head_chunks));
  }
  Json config;
  if (!in.warning.empty()) {
    config["_burst_warning"] = in.warning;  // JSON has no comment: the first key, instead of the first note
    header.erase(header.begin());
  }
  config["_burst_notes"] = header;
  config["train_micro_batch_size_per_gpu"] = s.micro_batch;
  config["gradient_accumulation_steps"] = p.job.batch / std::max(1, s.dp * s.micro_batch);
  if (p.job.dtype == "bf16") config["bf16"] = Json{{"enabled", true}};
  if (p.job.dtype == "fp16") config["fp16"] = Json{{"enabled", true}};
  Json zero{{"stage", s.zero.stage}};
  if (s.zero.offload) {
    zero["offload_optimizer"] = Json{{"device", "cpu"}, {"pin_memory", true}};
    // An offloaded optimizer is DeepSpeedCPUAdam unless the client brings one DeepSpeed accepts;
    // naming it here lets deepspeed.initialize build it (runtime/engine.py _configure_basic_optimizer).
    config["optimizer"] = Json{
        {"type", "AdamW"}, {"params", {{"lr", 3e-4}, {"betas", {0.9, 0.95}}, {"eps", 1e-8}, {"weight_decay", 0.1}}}};
    header.emplace_back("optimizer: AdamW on the CPU (DeepSpeedCPUAdam), lr 3e-4: set your own hyperparameters");
    config["_burst_notes"] = header;
  }
  config["zero_optimization"] = zero;
  config["sequence_parallel_size"] = s.ulysses;
  // The notes quote the plan file's path, which need not be UTF-8: such a byte becomes U+FFFD
  // rather than stopping the export (nlohmann's strict dump throws).
  return config.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace burst::exporter
