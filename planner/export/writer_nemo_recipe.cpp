// NeMo 2: the plan as a Python recipe (NeMo 2 configures training in Python, not YAML): the
// model's Megatron Core config, the MegatronStrategy with every parallel degree, the trainer,
// the optimizer and a data module sized as the plan's batch, ending in llm.pretrain. Run it as
// the script of torchrun or srun on every node, or take the objects into a NeMo-Run recipe.
//
// What each call and field is, at NeMo v2.4.0 and the Megatron Core it ships with:
//   llm.LlamaConfig        nemo/collections/llm/gpt/model/llama.py: RMSNorm, SwiGLU (silu, gated),
//                          RoPE, no biases, untied embeddings by default; the plan's dimensions are
//                          given, and num_query_groups (GQA), kv_channels, rotary_base, seq_length
//   cp_comm_type           Megatron Core's TransformerConfig (transformer_config.py): "p2p" ring,
//                          "a2a" Ulysses; recompute_granularity/method/num_layers likewise
//   nl.MegatronStrategy    nemo/lightning/pytorch/strategies/megatron_strategy.py: tensor, pipeline
//                          and context-parallel sizes, sequence_parallel, ddp (the distributed
//                          optimizer's config), fsdp="megatron" for parameter sharding (its tests,
//                          tests/lightning/pytorch/strategies/test_megatron_strategy.py)
//   nl.MegatronMixedPrecision(precision="bf16-mixed"), nl.MegatronOptimizerModule, llm.MockDataModule
//   (nemo/collections/llm/gpt/data/mock.py; replace it with your data module), llm.pretrain
//   (nemo/collections/llm/api.py: model, data, trainer, log, resume, optim).
// ZeRO: stage 2 is Megatron's distributed optimizer (optimizer states and gradients sharded);
// stage 3 adds Megatron FSDP (parameters too); stage 0 neither. Values are numbers and fixed
// words only: nothing from the plan file but numbers reaches the code outside comments.
#include <fmt/format.h>

#include "planner/detail/export/writers.hpp"

namespace burst::exporter {
namespace {

const char* python_bool(bool value) { return value ? "True" : "False"; }

}  // namespace

std::string write_nemo_recipe(const ExportInput& in) {
  const plan::Plan& p = in.plan;
  const plan::Strategy& s = in.strategy;
  const ModelSpec& m = p.job.model;
  const std::vector<std::string> header =
      header_lines(in,
                   "use: the script of torchrun (or srun) on every node, NeMo 2 installed (the NeMo container); "
                   "replace llm.MockDataModule with your data; burst export --nemo-version 1 writes NeMo 1.0's YAML");
  const int ranks = s.cp * s.ulysses;
  const bool full = s.checkpoint.policy == CheckpointPolicy::Full;
  const bool distributed_optimizer = s.zero.stage >= 2;
  std::string py = commented(header, "# ");
  py += "from megatron.core.distributed import DistributedDataParallelConfig\n";
  py += "from megatron.core.optimizer import OptimizerConfig\n";
  py += "from nemo import lightning as nl\n";
  py += "from nemo.collections import llm\n\n";
  py += "config = llm.LlamaConfig(\n";
  py += fmt::format("    num_layers={},\n", m.layers);
  py += fmt::format("    hidden_size={},\n", m.hidden);
  py += fmt::format("    ffn_hidden_size={},\n", m.ffn);
  py += fmt::format("    num_attention_heads={},\n", m.heads);
  py += fmt::format("    num_query_groups={},\n", m.kv_heads);
  py += fmt::format("    kv_channels={},\n", m.head_dim);
  py += fmt::format("    seq_length={},\n", p.job.seq);
  py += fmt::format("    rotary_base={},\n", rope_base_text(m.rope_base));
  if (m.qkv_bias) py += "    add_qkv_bias=True,\n";
  py += "    share_embeddings_and_output_weights=False,\n";
  if (ranks > 1) py += fmt::format("    cp_comm_type=\"{}\",\n", s.ulysses > 1 ? "a2a" : "p2p");
  if (full)
    py += "    recompute_granularity=\"full\",\n    recompute_method=\"uniform\",\n    recompute_num_layers=1,\n";
  py += ")\n";
  py += "model = llm.LlamaModel(config)\n\n";
  py += "strategy = nl.MegatronStrategy(\n";
  py += fmt::format("    tensor_model_parallel_size={},\n", s.tp);
  py += "    pipeline_model_parallel_size=1,\n";
  py += fmt::format("    context_parallel_size={},\n", ranks);
  py += fmt::format("    sequence_parallel={},\n", python_bool(s.tp > 1));
  py += fmt::format("    ddp=DistributedDataParallelConfig(use_distributed_optimizer={}),\n",
                    python_bool(distributed_optimizer));
  if (s.zero.stage == 3) py += "    fsdp=\"megatron\",\n";
  py += ")\n";
  py += "trainer = nl.Trainer(\n";
  py += fmt::format("    devices={},\n", in.ranks_per_node);
  py += fmt::format("    num_nodes={},\n", in.nodes);
  py += "    accelerator=\"gpu\",\n";
  py += "    strategy=strategy,\n";
  // FP8 as the recipes' bf16_with_fp8_mixed() sets it (nemo/collections/llm/recipes/precision/
  // mixed_precision.py at v2.4.0): hybrid formats, delayed scaling over a 1024-step amax history.
  const std::string fp8 = in.fp8_linears ? ", fp8=\"hybrid\", fp8_recipe=\"delayed\", fp8_amax_history_len=1024, "
                                           "fp8_amax_compute_algo=\"max\""
                                         : "";
  py += fmt::format("    plugins=nl.MegatronMixedPrecision(precision=\"{}\"{}),\n",
                    p.job.dtype == "bf16" ? "bf16-mixed" : "32", fp8);
  py += ")\n";
  py += fmt::format(
      "optim = nl.MegatronOptimizerModule(config=OptimizerConfig(optimizer=\"adam\", bf16={}, "
      "use_distributed_optimizer={}))\n",
      python_bool(p.job.dtype == "bf16"), python_bool(distributed_optimizer));
  py += fmt::format("data = llm.MockDataModule(seq_length={}, global_batch_size={}, micro_batch_size={})\n\n",
                    p.job.seq, p.job.batch, s.micro_batch);
  py += "if __name__ == \"__main__\":\n";
  py += "    llm.pretrain(model=model, data=data, trainer=trainer, optim=optim)\n";
  return py;
}

}  // namespace burst::exporter
