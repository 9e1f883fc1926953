# Megatron-LM settings written by burst 0.1.0 (burst export --to megatron)
# plan: tests/data/run/local-2x2-tiny-mha-1K-default.json: tiny-mha, 1K tokens x 1 (causal mask) on local x2, 4 ranks
# follows Megatron-LM core_v0.14.0 (23e00ed0, 2025-10-08)
# use: source this file; torchrun ... pretrain_gpt.py "${MEGATRON_ARGS[@]}" plus your data, tokenizer and optimizer arguments
# note: backward: the plan asks q_ring; Megatron-LM cannot: TransformerEngine's p2p ring has only the K,V-side backward (dK,dV travel with K,V); written: kv_ring
# note: predicted on the plan's cluster (default cost models): the plan (burst-usp) 718.3 ms a step, 356.4 tokens/s per GPU, 35.6 MiB per GPU
# note: predicted on the plan's cluster (default cost models): the Megatron-LM equivalent (Ulysses 2 x flat ring of 2) 728.3 ms a step, 351.5 tokens/s per GPU, 36.9 MiB per GPU; memory as Megatron-LM allocates (fp32 main gradients; logits + 1 fp32 logit-sized buffer; a fused gated activation keeping its input only); the plan is 1.01x its speed
# note: zero: Megatron FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset or above 1
MEGATRON_ARGS=(
  --tensor-model-parallel-size 1
  --pipeline-model-parallel-size 1
  --context-parallel-size 4
  --cp-comm-type a2a+p2p
  --hierarchical-context-parallel-sizes 2 2
  --seq-length 1024
  --max-position-embeddings 1024
  --micro-batch-size 1
  --global-batch-size 1
  --num-layers 2
  --hidden-size 512
  --ffn-hidden-size 1376
  --num-attention-heads 4
  --kv-channels 128
  --swiglu
  --position-embedding-type rope
  --rotary-base 10000
  --normalization RMSNorm
  --disable-bias-linear
  --untie-embeddings-and-output-weights
  --bf16
  --use-distributed-optimizer
  --use-megatron-fsdp
  --data-parallel-sharding-strategy optim_grads_params
  --ckpt-format fsdp_dtensor
  --optimizer-cpu-offload
  --use-precision-aware-optimizer
)
