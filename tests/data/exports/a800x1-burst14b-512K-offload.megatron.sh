# WARNING: Megatron-LM cannot run this plan on its cluster: its equivalent (1 rank) needs 104.9 GiB per GPU, budget 80.0 GiB (written with --force)
# Megatron-LM settings written by burst 0.1.0 (burst export --to megatron)
# plan: tests/data/exports/plans/a800x1-burst14b-512K-offload.json: burst-14b, 512K tokens x 1 (causal mask) on a800-4hca x1, 8 ranks
# follows Megatron-LM core_v0.14.0 (23e00ed0, 2025-10-08)
# use: source this file; torchrun ... pretrain_gpt.py "${MEGATRON_ARGS[@]}" plus your data, tokenizer and optimizer arguments
# note: checkpoint: the plan asks seq_stash (kept 0.75); Megatron-LM cannot: --recompute-granularity selective recomputes whole submodules (--recompute-modules); none keeps the attention output while recomputing the rest, as attn_stash does, and no flag keeps a fraction of the sequence; written: full
# note: lm_head: the plan asks fused with the loss in 128 chunks; Megatron-LM cannot: no flag computes the LM head and loss in sequence chunks (--cross-entropy-loss-fusion fuses the loss, not the logits); written: unfused
# note: predicted on the plan's cluster (default cost models): the plan (burst) 321.22 s a step, 204.0 tokens/s per GPU, 79.5 GiB per GPU
# note: predicted on the plan's cluster (default cost models): the Megatron-LM equivalent (1 rank) 385.13 s a step, 170.2 tokens/s per GPU, 104.9 GiB per GPU (does not fit: needs 104.9 GiB per GPU, budget 80.0 GiB); memory as Megatron-LM allocates (fp32 main gradients; logits + 1 fp32 logit-sized buffer; a fused gated activation keeping its input only); the plan is 1.20x its speed
# note: zero: Megatron FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset or above 1
MEGATRON_ARGS=(
  --tensor-model-parallel-size 8
  --sequence-parallel
  --pipeline-model-parallel-size 1
  --context-parallel-size 1
  --seq-length 524288
  --max-position-embeddings 524288
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
  --optimizer-cpu-offload
  --use-precision-aware-optimizer
)
