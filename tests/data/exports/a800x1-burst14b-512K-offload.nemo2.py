# WARNING: NeMo cannot run this plan on its cluster: its equivalent (1 rank) needs 125.3 GiB per GPU, budget 80.0 GiB (written with --force)
# NeMo settings written by burst 0.1.0 (burst export --to nemo)
# plan: tests/data/exports/plans/a800x1-burst14b-512K-offload.json: burst-14b, 512K tokens x 1 (causal mask) on a800-4hca x1, 8 ranks
# follows NeMo v2.4.0 (2381f42f, 2025-07-25)
# use: the script of torchrun (or srun) on every node, NeMo 2 installed (the NeMo container); replace llm.MockDataModule with your data; burst export --nemo-version 1 writes NeMo 1.0's YAML
# note: checkpoint: the plan asks seq_stash (kept 0.75); NeMo cannot: activations_checkpoint_granularity is full or selective (recompute core attention, the opposite of keeping it); nothing keeps a fraction of the sequence; written: full
# note: lm_head: the plan asks fused with the loss in 128 chunks; NeMo cannot: no key computes the LM head in sequence chunks; written: unfused
# note: offload: the plan asks optimizer on the CPU; NeMo cannot: no key offloads the optimizer (cpu_offloading moves activations and weights); written: optimizer on the GPU
# note: predicted on the plan's cluster (default cost models): the plan (burst) 321.22 s a step, 204.0 tokens/s per GPU, 79.5 GiB per GPU
# note: predicted on the plan's cluster (default cost models): the NeMo equivalent (1 rank) 381.40 s a step, 171.8 tokens/s per GPU, 125.3 GiB per GPU (does not fit: needs 125.3 GiB per GPU, budget 80.0 GiB); memory as NeMo allocates (fp32 main gradients; logits + 1 fp32 logit-sized buffer; a fused gated activation keeping its input only); the plan is 1.19x its speed
from megatron.core.distributed import DistributedDataParallelConfig
from megatron.core.optimizer import OptimizerConfig
from nemo import lightning as nl
from nemo.collections import llm

config = llm.LlamaConfig(
    num_layers=40,
    hidden_size=5120,
    ffn_hidden_size=13824,
    num_attention_heads=40,
    num_query_groups=40,
    kv_channels=128,
    seq_length=524288,
    rotary_base=10000,
    share_embeddings_and_output_weights=False,
    recompute_granularity="full",
    recompute_method="uniform",
    recompute_num_layers=1,
)
model = llm.LlamaModel(config)

strategy = nl.MegatronStrategy(
    tensor_model_parallel_size=8,
    pipeline_model_parallel_size=1,
    context_parallel_size=1,
    sequence_parallel=True,
    ddp=DistributedDataParallelConfig(use_distributed_optimizer=True),
    fsdp="megatron",
)
trainer = nl.Trainer(
    devices=8,
    num_nodes=1,
    accelerator="gpu",
    strategy=strategy,
    plugins=nl.MegatronMixedPrecision(precision="bf16-mixed"),
)
optim = nl.MegatronOptimizerModule(config=OptimizerConfig(optimizer="adam", bf16=True, use_distributed_optimizer=True))
data = llm.MockDataModule(seq_length=524288, global_batch_size=1, micro_batch_size=1)

if __name__ == "__main__":
    llm.pretrain(model=model, data=data, trainer=trainer, optim=optim)
