# Megatron-LM settings written by burst 0.1.0 (burst export --to megatron)
# plan: tests/data/plans/a800x4-burst14b-1M.json: burst-14b, 1M tokens x 1 (causal mask) on a800-4hca x4, 32 ranks
# follows Megatron-LM core_v0.14.0 (23e00ed0, 2025-10-08)
# use: source this file; torchrun ... pretrain_gpt.py "${MEGATRON_ARGS[@]}" plus your data, tokenizer and optimizer arguments
# note: backward: the plan asks q_ring; Megatron-LM cannot: TransformerEngine's p2p ring has only the K,V-side backward (dK,dV travel with K,V); written: kv_ring
# note: checkpoint: the plan asks attn_stash; Megatron-LM cannot: --recompute-granularity selective recomputes whole submodules (--recompute-modules); none keeps the attention output while recomputing the rest, as attn_stash does, and no flag keeps a fraction of the sequence; written: full
# note: lm_head: the plan asks fused with the loss in 32 chunks; Megatron-LM cannot: no flag computes the LM head and loss in sequence chunks (--cross-entropy-loss-fusion fuses the loss, not the logits); written: unfused
# note: predicted on the plan's cluster (default cost models): the plan (burst) 288.15 s a step, 113.7 tokens/s per GPU, 52.2 GiB per GPU
# note: predicted on the plan's cluster (default cost models): the Megatron-LM equivalent (flat ring of 32) 354.68 s a step, 92.4 tokens/s per GPU, 59.9 GiB per GPU; memory as Megatron-LM allocates (fp32 main gradients; logits + 1 fp32 logit-sized buffer; a fused gated activation keeping its input only); the plan is 1.23x its speed
# note: zero: Megatron FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset or above 1
MEGATRON_ARGS=(
  --tensor-model-parallel-size 1
  --pipeline-model-parallel-size 1
  --context-parallel-size 32
  --cp-comm-type p2p
  --seq-length 1048576
  --max-position-embeddings 1048576
  --micro-batch-size 1
  --global-batch-size 1
  --num-layers 40
  --hidden-size 5120
  --ffn-hidden-size 13824
  --num-attention-heads 40
  --kv-channels 128
  --swiglu
  --position-embedding-type rope
  --rotary-base 10000
  --normalization RMSNorm
  --disable-bias-linear
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
