// The family table (families.hpp). Where each value comes from: docs/strategies.md.
#include "simulator/attention/families.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/text.hpp"

namespace burst::sim {

namespace {

// One row; the fields not set keep FamilyTraits' defaults (a pure flat zigzag ring, full
// recompute, logits whole, ZeRO-3, taken as it ships).
FamilyTraits row(std::string_view name, const std::function<void(FamilyTraits&)>& set) {
  FamilyTraits f;
  f.name = name;
  set(f);
  return f;
}

// BurstEngine's recipe: sequence-level checkpointing over a striped layout keeping the later
// half, the LM head fused with the loss in 4096-token chunks, searched by the planner.
void burst_recipe(FamilyTraits& f) {
  f.checkpoint = {CheckpointPolicy::SeqStash, 0.5};
  f.training_layout = Layout::Striped;
  f.lm_head_chunk_tokens = 4096;
  f.searched = true;
}

// LoongTrain as its long-sequence launch runs it (InternEvo): a double ring, K,V-ring backward
// with dQ and dK, dV in fp32 through a rank's first window and bf16 after it; every layer
// checkpointed with attention recomputed (selective checkpoint++ off) and the hybrid ZeRO
// optimizer on the host; the logits cast to fp32, the loss (flash-attn's cross entropy) writing
// its gradient in place in that one copy.
void loongtrain_recipe(FamilyTraits& f) {
  f.ring = RingKind::Double;
  f.backward = BackwardMode::KvRing;
  f.dkv_bytes = 4;
  f.code.gradient_bytes_after_first_window = 2;  // cast to the activation dtype at its end
  f.checkpoint.policy = CheckpointPolicy::Full;
  f.optimizer_offload = true;
  f.memory.logits_fp32_buffers = 1;
}

}  // namespace

std::string describe_allocation(const FrameworkMemory& memory) {
  std::string text = memory.fp32_main_grads ? "fp32 main gradients" : "gradients in the activation dtype";
  if (memory.gradient_bucket_elements > 0) {
    text += fmt::format(", reduced in {:g}M-element buckets", memory.gradient_bucket_elements / 1e6);
  }
  text += fmt::format("; logits + {} fp32 logit-sized buffer{}", memory.logits_fp32_buffers,
                      memory.logits_fp32_buffers == 1 ? "" : "s");
  return memory.fused_gated_activation ? text + "; a fused gated activation keeping its input only" : text;
}

const std::vector<FamilyTraits>& family_table() {
  static const std::vector<FamilyTraits> table = {
      // BurstEngine: a double ring of zigzag blocks, bf16 gradients on the wire, the cheaper
      // backward for the shape.
      row("burst",
          [](FamilyTraits& f) {
            f.ring = RingKind::Double;
            burst_recipe(f);
          }),
      // Burst with a Ulysses group inside each node around a flat ring.
      row("burst-usp",
          [](FamilyTraits& f) {
            f.ulysses = UlyssesRule::UpToNode;
            burst_recipe(f);
          }),
      // Megatron-LM context parallelism: a flat zigzag ring (TransformerEngine), K,V ring
      // backward, full recompute, the distributed optimizer (ZeRO-1); bf16 training keeps an
      // fp32 main-gradient buffer, and the loss works on one fp32 copy of the logits.
      row("megatron-cp",
          [](FamilyTraits& f) {
            f.backward = BackwardMode::KvRing;
            f.code.output_accumulator_bytes = 0;                 // TransformerEngine's per-step correction, in bf16
            f.memory.separate_accumulator_communicator = false;  // [K,V, dK,dV] in one message a step
            f.checkpoint.policy = CheckpointPolicy::None;        // recompute_granularity None; NeMo's recipes set none
            f.zero_stage = 1;
            f.memory.fp32_main_grads = true;
            f.memory.logits_fp32_buffers = 1;
            f.memory.fused_gated_activation = true;  // --bias-swiglu-fusion, on by default
          }),
      // DeepSpeed-Ulysses: all-to-all over every rank, ZeRO-3 with its 5e8-element reduce
      // bucket; the sequence-parallel loss holds an fp32 copy of the logits, their softmax and
      // its log at once.
      row("ds-ulysses",
          [](FamilyTraits& f) {
            f.ulysses = UlyssesRule::World;
            f.layout = Layout::Contiguous;
            f.backward = BackwardMode::KvRing;
            f.memory.logits_fp32_buffers = 3;
            f.memory.gradient_bucket_elements = 5e8;
          }),
      // LoongTrain's double ring, and its 2D attention adding head parallelism up to 4, whose
      // launch makes the whole context group one window: a flat ring, dK, dV fp32 on every hop.
      row("loongtrain-double-ring", loongtrain_recipe),
      row("loongtrain-usp",
          [](FamilyTraits& f) {
            loongtrain_recipe(f);
            f.ulysses = UlyssesRule::UpTo4;
            f.ring = RingKind::Flat;
          }),
      // The original ring attention: contiguous blocks (the planner also tries zigzag), fp32 dK, dV;
      // ring-flash-attention's merge of a partial block copies the slice back.
      row("ring",
          [](FamilyTraits& f) {
            f.layout = Layout::Contiguous;
            f.backward = BackwardMode::KvRing;
            f.dkv_bytes = 4;
            f.code.copies_merged_slices = true;
            f.memory.separate_accumulator_communicator = false;  // both RingComms on one process group
            f.also_zigzag_layout = true;
          }),
  };
  return table;
}

std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const FamilyTraits& f : family_table()) names.emplace_back(f.name);
  return names;
}

const FamilyTraits* find_family(std::string_view name) {
  const auto& table = family_table();
  const auto it = std::find_if(table.begin(), table.end(), [&](const FamilyTraits& f) { return f.name == name; });
  return it == table.end() ? nullptr : &*it;
}

const FamilyTraits& family_traits(std::string_view name, const std::string& where) {
  const FamilyTraits* family = find_family(name);
  if (family == nullptr) {
    throw Error(Problem{where, fmt::format("unknown strategy '{}'", name), text::join(family_names()),
                        text::did_you_mean(name, family_names())});
  }
  return *family;
}

}  // namespace burst::sim
