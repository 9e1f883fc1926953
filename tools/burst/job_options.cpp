#include "tools/burst/job_options.hpp"

#include "common/kernel_paths.hpp"
#include "common/text.hpp"
#include "tools/burst/validators.hpp"

namespace burst::cli {

void add_job_options(CLI::App& cmd, JobOptions& o) {
  cmd.add_option("--topology", o.topology.topology, "Topology preset (burst topo list), our JSON or an NCCL XML dump")
      ->required();
  add_topology_source_options(cmd, o.topology, true);
  cmd.add_option("--model", o.model,
                 "Model preset (" + text::join(sim::model_preset_names()) + ") or a Hugging Face config.json")
      ->required();
  cmd.add_option("--vocab", o.vocab, "Vocabulary size replacing the model's, e.g. 32000 (the LM head grows with it)")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--seq", o.seq, "Sequence length in tokens, e.g. 1M (= 1048576), 512K")->required();
  auto* batch = cmd.add_option("--global-batch,--batch", o.batch,
                               "Sequences per optimizer step, over every data-parallel replica and micro-batch")
                    ->check(kAtLeastOne)
                    ->capture_default_str();
  cmd.add_option("--global-batch-tokens", o.batch_tokens,
                 "The global batch in tokens instead, e.g. 16M: a whole number of --seq sequences")
      ->excludes(batch);
  cmd.add_option("--mask", o.mask, "Attention mask: full, causal, sliding:W, document:L")->capture_default_str();
  cmd.add_option("--dtype", o.dtype, "Precision of parameters, activations and transfers: bf16 or fp32")
      ->check(CLI::IsMember({"bf16", "fp32"}))
      ->capture_default_str();
  cmd.add_option("--compute-model", o.compute_model, "Compute cost model")
      ->check(CLI::IsMember(sim::compute_model_names()))
      ->capture_default_str();
  cmd.add_option("--comm-model", o.comm_model, "Communication cost model")
      ->check(CLI::IsMember(sim::comm_model_names()))
      ->capture_default_str();
  cmd.add_option("--calibration", o.calibration, "Calibration file (burst.calibration/1) for the cost models");
  cmd.add_option("--kernel-path", o.kernel_path,
                 "Price the attention kernels on this CUDA kernel path (auto, mma.sync, wgmma): the curves the "
                 "calibration measured on it; a plan records it and burst run runs it")
      ->check(CLI::IsMember(kernel_paths::choice_names()))
      ->capture_default_str();
}

}  // namespace burst::cli
