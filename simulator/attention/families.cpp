// The family table (families.hpp). Where each value comes from: docs/strategies.md.
#include "simulator/attention/families.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/text.hpp"

namespace burst::sim {

const std::vector<FamilyTraits>& family_table() {
  static const std::vector<FamilyTraits> table = [] {
    std::vector<FamilyTraits> t;
    // BurstEngine: a double ring of zigzag blocks, bf16 gradients on the wire, sequence-level
    // checkpointing over a striped layout keeping the later half, the LM head fused with the
    // loss in 4096-token chunks, ZeRO-3.
    t.push_back({.name = "burst", .ring = RingKind::Double, .dkv_bytes = 2, .checkpoint = CheckpointPolicy::SeqStash,
                 .kept_fraction = 0.5, .training_layout = Layout::Striped, .lm_head_chunk_tokens = 4096,
                 .searched = true});
    // Burst with a Ulysses group inside each node around a flat ring.
    t.push_back({.name = "burst-usp", .ulysses = UlyssesRule::UpToNode, .ring = RingKind::Flat, .dkv_bytes = 2,
                 .checkpoint = CheckpointPolicy::SeqStash, .kept_fraction = 0.5, .training_layout = Layout::Striped,
                 .lm_head_chunk_tokens = 4096, .searched = true});
    // Megatron-LM context parallelism: a flat zigzag ring (TransformerEngine), K,V ring
    // backward, full recompute, the distributed optimizer (ZeRO-1).
    t.push_back({.name = "megatron-cp", .backward = BackwardMode::KvRing, .dkv_bytes = 2, .zero_stage = 1});
    // DeepSpeed-Ulysses: all-to-all over every rank, ZeRO-3.
    t.push_back({.name = "ds-ulysses", .ulysses = UlyssesRule::World, .layout = Layout::Contiguous,
                 .backward = BackwardMode::KvRing, .dkv_bytes = 2});
    // LoongTrain: a double ring (fp32 dK, dV), keeping the attention output.
    t.push_back({.name = "loongtrain-double-ring", .ring = RingKind::Double, .backward = BackwardMode::KvRing,
                 .dkv_bytes = 4, .checkpoint = CheckpointPolicy::AttnStash});
    t.push_back({.name = "loongtrain-usp", .ulysses = UlyssesRule::UpTo4, .ring = RingKind::Double,
                 .backward = BackwardMode::KvRing, .dkv_bytes = 4, .checkpoint = CheckpointPolicy::AttnStash});
    // The original ring attention: contiguous blocks (the planner also tries zigzag), fp32 dK, dV.
    t.push_back({.name = "ring", .layout = Layout::Contiguous, .backward = BackwardMode::KvRing, .dkv_bytes = 4,
                 .also_zigzag_layout = true});
    return t;
  }();
  return table;
}

std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const FamilyTraits& f : family_table()) names.emplace_back(f.name);
  return names;
}

const FamilyTraits& family_traits(std::string_view name, const std::string& where) {
  const auto& table = family_table();
  const auto it = std::find_if(table.begin(), table.end(), [&](const FamilyTraits& f) { return f.name == name; });
  if (it == table.end()) {
    throw Error(Problem{where, fmt::format("unknown strategy '{}'", name), text::join(family_names()),
                        text::did_you_mean(name, family_names())});
  }
  return *it;
}

}  // namespace burst::sim
