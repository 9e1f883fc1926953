// Lowering one attention layer to task graphs, per strategy.
//
// A strategy splits the world of P = gpu_count ranks into Ulysses groups of U consecutive
// ranks (heads split U ways by all-to-all) and a context-parallel ring of P/U groups over the
// sequence. The ring is flat (one ring over all ranks) or double (inner ring = ranks of a
// node over NVLink, outer ring = same local rank across nodes, so the next node's block
// crosses IB while the inner ring computes). The layout decides which tokens each ring rank
// owns: contiguous, zigzag (2P chunks, rank r holds r and 2P-1-r) or striped (token t on rank
// t mod P). Forward circulates K,V; backward circulates either K,V with their dK,dV
// accumulators (RingAttention) or the query side Q, dO, D, lse with dQ one step behind
// (BurstAttention). Blocks the mask leaves empty get no compute, and a block stops travelling
// once no later rank needs it.
//
// Forward and backward are separate graphs: in training they run far apart in time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/parallelism.hpp"
#include "common/strategy_knobs.hpp"
#include "common/token_sets.hpp"
#include "simulator/attention/families.hpp"
#include "simulator/task_graph.hpp"
#include "topologies/topology.hpp"

namespace burst::sim {

// The shared vocabulary (common/parallelism.hpp), used here unqualified.
using burst::BackwardMode;
using burst::Layout;
using burst::Mask;
using burst::MaskKind;
using burst::RingKind;
using burst::to_string;
// Token sets and exact pair counting (common/token_sets.hpp).
using burst::allowed_pairs;
using burst::layout_multiple;
using burst::Progression;
using burst::ring_tokens;
using burst::TokenSet;

struct AttentionShape {
  int heads = 0;     // per tensor-parallel rank
  int kv_heads = 0;  // per tensor-parallel rank
  int head_dim = 0;
  std::int64_t seq = 0;  // tokens per sequence
  int batch = 1;
  int dtype_bytes = 2;  // bf16 activations on the wire
  // Tensor-parallel degree T: the layer runs T copies side by side, copy t on GPUs T l + t of
  // every node (l = 0 .. G/T - 1), each over its heads; the strategy's world is the G/T ranks of
  // a node's copy (attention_world). 1: one copy on every GPU.
  int tensor_parallel = 1;
  // Data-parallel degree D: D replicas of that side by side, each on its own batch (the
  // shape's batch is one replica's micro-batch), replica d on the d-th P / D of the GPUs.
  int data_parallel = 1;
};

// A family's name and its attention knobs (common/strategy_knobs.hpp; inner 0: ring ranks per node),
// and what the family's own code does beyond them (FamilyCode, families.hpp): a preset carries its
// family's; a strategy read back from a plan keeps the defaults, which are what burst's runtime
// does when it executes the plan.
struct AttentionStrategy : AttentionKnobs {
  std::string name;  // family, e.g. "burst", "megatron-cp"
  FamilyCode code;   // burst's runtime's by default
};

// The family's defaults as used in practice (see docs/strategies.md) for this shape and
// topology. Throws burst::Error for an unknown name (with did-you-mean).
[[nodiscard]] AttentionStrategy strategy_preset(std::string_view name, const AttentionShape& shape,
                                                const topo::Topology& topology);
// Why the strategy cannot run this job on this topology ("" if it can): heads not divisible
// by the Ulysses degree, sequence not divisible as the layout needs, inner size not dividing
// the ring, and so on.
[[nodiscard]] std::string check_applicable(const AttentionStrategy& strategy, const AttentionShape& shape,
                                           const Mask& mask, const topo::Topology& topology);

// A ring folded onto one window of whole nodes (attention/ring_fold.hpp): the graphs hold the
// tasks of the window's ranks and the transfers into them, standing for `windows` windows.
struct RingFold {
  int windows = 1;  // windows the ring is made of; 1: not folded, every rank has its tasks
  // The windows the forward and the backward graphs hold (each phase's busiest), as world
  // ranks [first, first + size).
  int forward_first = 0, backward_first = 0;
  int size = 0;
  // Every window does the same work at every step (full mask), so only links could tell them
  // apart; false: the work differs by step (a causal mask), and each phase simulates the window
  // holding its busiest rank.
  bool exact = true;
  // Not exact: max / mean of the kernels' seconds over every rank, forward and backward, from
  // the compute cost model alone (the simulated window's ranks would not show the spread).
  double forward_imbalance = 1, backward_imbalance = 1;
  std::string why_not;  // asked to fold and not folded: why
};

struct LoweredAttention {
  TaskGraph forward;
  TaskGraph backward;
  // Per rank: FLOPs actually computed (empty blocks excluded), forward and backward; every
  // rank's, folded or not.
  std::vector<double> forward_flops;
  std::vector<double> backward_flops;
  RingFold fold;
};

// Throws burst::Error when check_applicable() says the strategy cannot run.
[[nodiscard]] LoweredAttention lower_attention(const AttentionShape& shape, const Mask& mask,
                                               const AttentionStrategy& strategy, const topo::Topology& topology);

}  // namespace burst::sim
