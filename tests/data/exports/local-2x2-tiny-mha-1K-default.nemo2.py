# NeMo settings written by burst 0.1.0 (burst export --to nemo)
# plan: tests/data/run/local-2x2-tiny-mha-1K-default.json: tiny-mha, 1K tokens x 1 (causal mask) on local x2, 4 ranks
# follows NeMo v2.4.0 (2381f42f, 2025-07-25)
# use: the script of torchrun (or srun) on every node, NeMo 2 installed (the NeMo container); replace llm.MockDataModule with your data; burst export --nemo-version 1 writes NeMo 1.0's YAML
# note: attention: the plan asks Ulysses 2 x flat ring of 2; NeMo cannot: model.cp_comm_type a2a+p2p needs hierarchical context-parallel groups, which NeMo's parallel-state set-up does not make, and its p2p ring is one flat ring; written: flat ring of 4
# note: backward: the plan asks q_ring; NeMo cannot: TransformerEngine's p2p ring has only the K,V-side backward; written: kv_ring
# note: offload: the plan asks optimizer on the CPU; NeMo cannot: no key offloads the optimizer (cpu_offloading moves activations and weights); written: optimizer on the GPU
# note: predicted on the plan's cluster (default cost models): the plan (burst-usp) 718.3 ms a step, 356.4 tokens/s per GPU, 35.6 MiB per GPU
# note: predicted on the plan's cluster (default cost models): the NeMo equivalent (flat ring of 4) 737.8 ms a step, 347.0 tokens/s per GPU, 54.8 MiB per GPU; memory as NeMo allocates (fp32 main gradients; logits + 1 fp32 logit-sized buffer; a fused gated activation keeping its input only); the plan is 1.03x its speed
from megatron.core.distributed import DistributedDataParallelConfig
from megatron.core.optimizer import OptimizerConfig
from nemo import lightning as nl
from nemo.collections import llm

config = llm.LlamaConfig(
    num_layers=2,
    hidden_size=512,
    ffn_hidden_size=1376,
    num_attention_heads=4,
    num_query_groups=4,
    kv_channels=128,
    seq_length=1024,
    rotary_base=10000,
    share_embeddings_and_output_weights=False,
    cp_comm_type="p2p",
)
model = llm.LlamaModel(config)

strategy = nl.MegatronStrategy(
    tensor_model_parallel_size=1,
    pipeline_model_parallel_size=1,
    context_parallel_size=4,
    sequence_parallel=False,
    ddp=DistributedDataParallelConfig(use_distributed_optimizer=True),
    fsdp="megatron",
)
trainer = nl.Trainer(
    devices=2,
    num_nodes=2,
    accelerator="gpu",
    strategy=strategy,
    plugins=nl.MegatronMixedPrecision(precision="bf16-mixed"),
)
optim = nl.MegatronOptimizerModule(config=OptimizerConfig(optimizer="adam", bf16=True, use_distributed_optimizer=True))
data = llm.MockDataModule(seq_length=1024, global_batch_size=1, micro_batch_size=1)

if __name__ == "__main__":
    llm.pretrain(model=model, data=data, trainer=trainer, optim=optim)
