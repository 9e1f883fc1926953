// Each family's training defaults as its own framework ships them (docs/iteration-model.md):
//   megatron-cp   full recompute, ZeRO-1 (Megatron's distributed optimizer), logits whole;
//   ds-ulysses    full recompute, ZeRO-3, logits whole;
//   loongtrain-*  selective checkpointing that keeps the attention output, ZeRO-3, logits whole;
//   ring          full recompute, ZeRO-3, logits whole;
//   burst, burst-usp
//                 BurstEngine's recipe: striped layout, so that "the first half of every rank"
//                 is "the first half of the sequence", and sequence-level checkpointing that
//                 keeps the attention output of the later half (kept_fraction 0.5); the LM head
//                 fused with the loss over chunks of 4096 local tokens; ZeRO-3, no offload.
// The attention part is strategy_preset()'s; nothing here is offloaded.
#include <algorithm>
#include <cmath>

#include "simulator/training/training.hpp"

namespace burst::sim {
namespace {

constexpr double kBurstChunkTokens = 4096;  // BurstEngine's fused LM head chunk

}  // namespace

TrainingStrategy training_preset(std::string_view family, const TrainingJob& job, const topo::Topology& topology) {
  TrainingStrategy s;
  s.attention = strategy_preset(family, attention_shape(job), topology);  // throws for unknown names
  s.lm_head_chunks = 1;
  s.zero.stage = 3;
  s.zero.offload = false;
  s.checkpoint.policy = CheckpointPolicy::Full;
  s.checkpoint.kept_fraction = 0;
  if (family == "megatron-cp") {
    s.zero.stage = 1;
  } else if (family == "loongtrain-double-ring" || family == "loongtrain-usp") {
    s.checkpoint.policy = CheckpointPolicy::AttnStash;
  } else if (family == "burst" || family == "burst-usp") {
    s.attention.layout = Layout::Striped;
    s.checkpoint.policy = CheckpointPolicy::SeqStash;
    s.checkpoint.kept_fraction = 0.5;
    s.lm_head_chunks = std::max(1, static_cast<int>(std::ceil(local_tokens(job, topology) / kBurstChunkTokens)));
  }
  return s;
}

}  // namespace burst::sim
