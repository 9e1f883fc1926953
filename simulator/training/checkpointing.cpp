// How much of the attention forward a checkpointing policy runs twice.
//
// full recomputes every layer in the backward, attention included: fraction 1. none keeps
// everything and attn_stash keeps the attention output O and its lse, so the backward rebuilds
// only the dense parts: fraction 0. seq_stash(f) keeps O and lse for the later f of every
// rank's tokens; under the striped layout (token t on rank t mod R) those are the later f of the
// sequence, so the recompute is the forward of the earliest (1 - f) * S queries against every
// key they may see. Its share of the work is a ratio of allowed (query, key) pairs, counted
// exactly by allowed_pairs():
//   fraction = pairs(queries [0, (1 - f) S), keys [0, S)) / pairs(all queries, all keys).
// Causal: ((1 - f) S)^2 / S^2 = (1 - f)^2, so keeping half recomputes a quarter; a sliding
// window of W << S makes it about 1 - f (every query sees about W keys); a full mask, 1 - f.
// Striped balances this across ranks, so the busiest rank's share is the same fraction.
#include <algorithm>
#include <cmath>

#include "common/token_sets.hpp"
#include "simulator/training/training.hpp"

namespace burst::sim {

double attention_recompute_fraction(const Mask& mask, std::int64_t seq, const CheckpointConfig& checkpoint) {
  switch (checkpoint.policy) {
    case CheckpointPolicy::Full: return 1;
    case CheckpointPolicy::None:
    case CheckpointPolicy::AttnStash: return 0;
    case CheckpointPolicy::SeqStash: break;
  }
  if (seq < 1) return 0;
  const double recomputed =
      std::clamp(std::round((1 - checkpoint.kept_fraction) * static_cast<double>(seq)), 0.0, static_cast<double>(seq));
  const Progression all{0, seq, 1};
  const Progression early{0, static_cast<std::int64_t>(recomputed), 1};
  const auto total = static_cast<double>(allowed_pairs(mask, all, all));
  return total > 0 ? static_cast<double>(allowed_pairs(mask, early, all)) / total : 0;
}

}  // namespace burst::sim
