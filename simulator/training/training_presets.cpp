// Each family's training defaults as its own framework ships them: the attention preset
// (strategy_preset) plus the recipe of its row in the family table (attention/families.hpp):
// what is checkpointed, the LM head fused with the loss over chunks of local tokens or the
// logits whole, the ZeRO stage and whether its optimizer runs on the host, and how the family's
// framework allocates memory; each data-parallel replica runs one sequence at a time
// (micro-batches of 1, accumulating gradients over its batch / dp), as long-context recipes do.
// docs/strategies.md has the sources.
#include <algorithm>
#include <cmath>

#include "simulator/training/training.hpp"

namespace burst::sim {

TrainingStrategy training_preset(std::string_view family, const TrainingJob& job, const topo::Topology& topology) {
  return training_preset(family, job, topology, 1);
}

TrainingStrategy training_preset(std::string_view family, const TrainingJob& job, const topo::Topology& topology,
                                 int tp, int dp) {
  const FamilyTraits& f = family_traits(family);
  TrainingStrategy s;
  s.tp = tp;
  s.dp = dp;
  s.micro_batch = 1;
  s.attention = strategy_preset(family, attention_shape(job, s), topology);
  if (f.training_layout) s.attention.layout = *f.training_layout;
  s.checkpoint = f.checkpoint;
  s.lm_head_chunks =
      f.lm_head_chunk_tokens > 0
          ? std::max(1, static_cast<int>(std::ceil(local_tokens(job, topology, s) / f.lm_head_chunk_tokens)))
          : 1;
  s.zero.stage = f.zero_stage;
  s.zero.offload = f.optimizer_offload;
  s.memory = f.memory;
  return s;
}

}  // namespace burst::sim
