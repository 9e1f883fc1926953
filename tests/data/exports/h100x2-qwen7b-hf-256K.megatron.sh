# Megatron-LM settings written by burst 0.1.0 (burst export --to megatron)
# plan: tests/data/exports/plans/h100x2-qwen7b-hf-256K.json: Qwen/Qwen2.5-7B-Instruct, 256K tokens x 1 (causal mask) on dgx-h100 x2, 16 ranks
# follows Megatron-LM core_v0.14.0 (23e00ed0, 2025-10-08)
# use: source this file; torchrun ... pretrain_gpt.py "${MEGATRON_ARGS[@]}" plus your data, tokenizer and optimizer arguments
# note: attention: the plan asks double ring 2x4; Megatron-LM cannot: --hierarchical-context-parallel-sizes splits a2a (Ulysses) from p2p (ring); the p2p ring itself is one flat ring; written: flat ring of 8
# note: checkpoint: the plan asks attn_stash; Megatron-LM cannot: --recompute-granularity selective recomputes whole submodules (--recompute-modules); none keeps the attention output while recomputing the rest, as attn_stash does, and no flag keeps a fraction of the sequence; written: full
# note: predicted on the plan's cluster (default cost models): the plan (burst) 12.03 s a step, 1362.2 tokens/s per GPU, 48.3 GiB per GPU
# note: predicted on the plan's cluster (default cost models): the Megatron-LM equivalent (flat ring of 8) 14.77 s a step, 1109.4 tokens/s per GPU, 33.8 GiB per GPU; memory as Megatron-LM allocates (fp32 main gradients; logits + 1 fp32 logit-sized buffer; a fused gated activation keeping its input only); the plan is 1.23x its speed
# note: zero: Megatron FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset or above 1
MEGATRON_ARGS=(
  --tensor-model-parallel-size 2
  --sequence-parallel
  --pipeline-model-parallel-size 1
  --context-parallel-size 8
  --cp-comm-type p2p
  --seq-length 262144
  --max-position-embeddings 262144
  --micro-batch-size 1
  --global-batch-size 1
  --num-layers 28
  --hidden-size 3584
  --ffn-hidden-size 18944
  --num-attention-heads 28
  --kv-channels 128
  --group-query-attention
  --num-query-groups 4
  --swiglu
  --position-embedding-type rope
  --rotary-base 1000000
  --normalization RMSNorm
  --disable-bias-linear
  --add-qkv-bias
  --untie-embeddings-and-output-weights
  --bf16
  --recompute-granularity full
  --recompute-method uniform
  --recompute-num-layers 1
  --use-distributed-optimizer
  --use-megatron-fsdp
  --data-parallel-sharding-strategy optim_grads_params
  --ckpt-format fsdp_dtensor
)
