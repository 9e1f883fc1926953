// The strategy families, one row each: everything that makes "megatron-cp" megatron-cp, read
// by the attention presets (strategy_preset), the training presets (training_preset) and the
// planner's search (planner/search/candidates.hpp), so a family is declared here and only here.
//
// A family is how one framework distributes attention and trains, as its public code and
// launch scripts set it (docs/strategies.md gives each row's sources): the Ulysses degree rule,
// the ring (flat or double), the layout, the backward mode and what precision the travelling
// gradients have; then the training recipe: what is checkpointed, how the LM head meets the
// loss, which ZeRO stage; then how its framework allocates memory beyond what those knobs
// decide (the gradient buffer's precision, what the loss holds of the logits, fixed buffers).
// Burst's own families are starting points the planner searches from; the peers are taken as
// they ship.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/parallelism.hpp"
#include "common/strategy_knobs.hpp"

namespace burst::sim {

// How a family picks its Ulysses (head-parallel) degree U for a world.
enum class UlyssesRule {
  None,      // U = 1: a pure ring
  World,     // U = every rank (DeepSpeed-Ulysses alone)
  UpTo4,     // the largest valid U up to 4 (LoongTrain's 2D attention as its scripts set it)
  UpToNode,  // the largest valid U up to a node's GPUs (all-to-all over NVLink only)
};

// Memory as the family's framework allocates it, where it differs from what the knobs alone
// imply (docs/strategies.md, "Memory as each framework allocates it", has each value's source).
struct FrameworkMemory {
  bool fp32_main_grads = false;         // the backward accumulates gradients into an fp32 buffer (Megatron's main_grad)
  int logits_fp32_buffers = 2;          // fp32 tensors of the logits' shape the LM head and loss hold at their peak,
                                        // beside the logits themselves (burst: the softmax and its gradient)
  double gradient_bucket_elements = 0;  // a fixed gradient-reduction bucket, in elements of the activation dtype
  // The ring's travelling gradients (dK,dV or dQ) on an NCCL communicator of their own beside the
  // blocks' (burst's runtime, LoongTrain), each holding its buffers; false: one communicator
  // carries both (TransformerEngine packs them into one message, ring-flash-attention runs both on
  // one process group).
  bool separate_accumulator_communicator = true;
  // A gated MLP's activation fused into one kernel that keeps only its input (gate and up) for
  // the backward and recomputes silu(gate) there (Megatron-LM's bias_swiglu_fusion); false: the
  // unfused autograd, which keeps silu(gate) too, f more elements a token.
  bool fused_gated_activation = false;
};

// What the family's code does on the ring that the knobs do not say and the simulator prices,
// read from that code (docs/strategies.md, "What each family's code runs", gives the repository,
// commit and lines of each value, and the traits found there that are not priced).
struct FamilyCode {
  // The forward's running output between ring steps: fp32 (4) in ring-flash-attention,
  // LoongTrain, BurstEngine and burst's runtime; TransformerEngine corrects it in the activation
  // dtype after every step (0: that dtype). Each step's merge reads and writes it.
  int output_accumulator_bytes = 4;
  // A double ring's gradient accumulators once a rank's first window (inner ring, its own
  // node's keys) is done: bytes per element of the travelling dK, dV (the hop out of the first
  // window and every later one) and of the resident dQ summed at every later step; 0: as in the
  // first window. LoongTrain sums dQ and dK, dV in fp32 through its first window, casts them to
  // bf16 at its end and from then on sums and sends them in bf16 (2).
  int gradient_bytes_after_first_window = 0;
  // The forward's merge of a block that covers only part of the rank's queries (zigzag's later
  // half, striped's shifted triangle): ring-flash-attention merges the slice of the running
  // output and lse into new tensors and copies them back into the slice, one more read and
  // write of those rows; false: merged in place.
  bool copies_merged_slices = false;
};

struct FamilyTraits {
  std::string_view name;
  // Attention.
  UlyssesRule ulysses = UlyssesRule::None;
  RingKind ring = RingKind::Flat;
  Layout layout = Layout::Zigzag;
  std::optional<BackwardMode> backward;  // none: the cheaper in bytes for the job's shape
  int dq_bytes = 2;                      // bytes per element of a travelling dQ
  int dkv_bytes = 2;                     // ... of travelling dK, dV
  FamilyCode code;
  // Training recipe.
  CheckpointConfig checkpoint;            // what is checkpointed (SeqStash: the share kept)
  std::optional<Layout> training_layout;  // a layout the recipe needs instead (sequence stash: striped)
  double lm_head_chunk_tokens =
      0;  // LM head fused with the loss over chunks of this many local tokens; 0: logits whole
  int zero_stage = 3;
  bool optimizer_offload = false;  // the optimizer's state and step on the host (ZeroConfig::offload)
  FrameworkMemory memory;
  // Planning.
  bool searched = false;            // the planner searches its knobs from this starting point
  bool also_zigzag_layout = false;  // the planner also tries the preset with a zigzag layout
};

// How a framework allocates, in a few words for reports and exports: "fp32 main gradients;
// logits + 1 fp32 copy".
[[nodiscard]] std::string describe_allocation(const FrameworkMemory& memory);

// Every family, in the order tables and searches list them (burst's own first).
[[nodiscard]] const std::vector<FamilyTraits>& family_table();
[[nodiscard]] std::vector<std::string> family_names();
// The row of `name`, or nullptr when no family has that name.
[[nodiscard]] const FamilyTraits* find_family(std::string_view name);
// The row of `name`; throws burst::Error at `where` naming the families (with did-you-mean).
[[nodiscard]] const FamilyTraits& family_traits(std::string_view name, const std::string& where = "strategy");

}  // namespace burst::sim
