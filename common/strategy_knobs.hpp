// The knobs of a strategy, declared once. The plan contract (plan::Strategy), the simulator
// (sim::AttentionStrategy, sim::TrainingStrategy) and the what-if questions of `burst simulate`
// (jobs) are built from these structs, so a knob added here reaches all of them.
//
// AttentionKnobs: how one attention layer is distributed (docs/strategies.md, "The knobs").
// TrainingKnobs: what the rest of the iteration does: tensor and data parallelism, checkpointing, the LM
// head's chunks, ZeRO sharding and offload (docs/iteration-model.md). AttentionKnobOverrides: the attention
// knobs a what-if may change, each unset one keeping the strategy's own value.
#pragma once

#include <optional>

#include "common/parallelism.hpp"

namespace burst {

struct AttentionKnobs {
  int ulysses = 1;  // head-parallel degree U (consecutive ranks trade sequence for heads)
  RingKind ring = RingKind::Flat;
  int inner = 0;  // double ring: inner ring size (the simulator reads 0 as the ring ranks per
                  // node; a plan always records the size, the whole ring when flat)
  Layout layout = Layout::Zigzag;
  BackwardMode backward = BackwardMode::QRing;
  int dkv_bytes = 2;    // K,V-ring backward: bytes per element of travelling dK,dV
  int dq_bytes = 2;     // Q-ring backward: bytes per element of travelling dQ
  bool overlap = true;  // double buffering: the next transfer in flight during compute
  friend bool operator==(const AttentionKnobs&, const AttentionKnobs&) = default;
};

struct CheckpointConfig {
  CheckpointPolicy policy = CheckpointPolicy::Full;
  double kept_fraction = 0;  // seq_stash: fraction of the local sequence whose O and lse are kept
  friend bool operator==(const CheckpointConfig&, const CheckpointConfig&) = default;
};

struct ZeroConfig {
  int stage = 3;         // 0: replicated; 1: optimizer sharded; 2: + gradients; 3: + parameters
  bool offload = false;  // optimizer state and step on the CPU
  friend bool operator==(const ZeroConfig&, const ZeroConfig&) = default;
};

struct TrainingKnobs {
  // Tensor-parallel degree T (Megatron-LM's, with sequence parallelism): T consecutive GPUs of a
  // node split every linear layer's weights and, around attention, the heads; the context-
  // parallel world (ring x Ulysses) is the rest, one rank per T GPUs (docs/iteration-model.md).
  int tp = 1;
  // Data-parallel degree D: D replicas of the tensor x context-parallel world, outermost (rank
  // r of replica d is world rank d P / D + r), each training on batch / D of the step's
  // sequences, micro_batch at a time: batch / (D micro_batch) micro-batches whose gradients
  // accumulate before one reduction and one optimizer step (docs/iteration-model.md).
  int dp = 1;
  int micro_batch = 1;  // sequences a replica runs through forward and backward together
  CheckpointConfig checkpoint;
  int lm_head_chunks = 1;  // 1: the local logits are materialised whole (unfused)
  ZeroConfig zero;
  friend bool operator==(const TrainingKnobs&, const TrainingKnobs&) = default;
};

struct AttentionKnobOverrides {
  std::optional<int> ulysses;
  std::optional<RingKind> ring;
  std::optional<int> inner;
  std::optional<Layout> layout;
  std::optional<BackwardMode> backward;
  std::optional<bool> overlap;
  // Sets every knob that is set here; the others keep their values.
  void apply_to(AttentionKnobs& knobs) const;
};

}  // namespace burst
