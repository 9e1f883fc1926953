// The candidates of one strategy family: the points of the search space the planner scores.
//
// Our families (burst, burst-usp) are searched: Ulysses degree (burst-usp: every degree that
// splits the heads inside a node), flat ring or double ring with every inner size that divides
// the ring, zigzag or striped layout, Q-ring or K,V-ring backward, checkpoint policy (none,
// full, attention-output stash, and sequence-level stash of 1/4, 1/2 or 3/4 of the local
// sequence under the striped layout), LM-head chunk count (unfused, or chunks of 16K, 4K or
// 1K local tokens) and optimizer offload. The peers are what their users run (docs/strategies.md):
// one candidate each, their preset, because the point is to say by how much we beat the
// peers as they are used, not as we would tune them. `ring` also tries zigzag, as people do.
//
// Every family is tried at every parallel layout the job and the cluster allow: every
// tensor-parallel degree (tensor_parallel_degrees: 1, and where a node's GPUs are joined by
// NVLink every degree above 1 dividing its GPUs, both head counts and the MLP width) with every
// data-parallel degree the global batch and the cluster allow (data_parallel_degrees). Tensor
// parallelism stays inside a node and the D replicas are outermost, so the context-parallel world
// is the rest: the Ulysses degrees divide the node's GPUs over T, the ring is P / (T U D). Our
// families try two micro-batch sizes per replica, its whole share of the batch and one sequence
// (gradient accumulation); the peers run one sequence at a time, as their long-context recipes
// do. Layouts times knobs is too many to score at large batches, so the search ranks the layouts
// by a few probes each (layout_probes) and searches the knobs of the best ones (search.hpp).
//
// Which family is searched and which is taken as it ships is a trait of the family
// (simulator/attention/families.hpp). The order is fixed, so the search is deterministic:
// ties go to the earlier candidate.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "simulator/training/training.hpp"

namespace burst::planner {

// The tensor-parallel degrees the search tries, 1 first.
[[nodiscard]] std::vector<int> tensor_parallel_degrees(const sim::TrainingJob& job, const topo::Topology& topology);
// The data-parallel degrees the search tries beside tensor parallelism of `tp`, 1 first: every
// divisor of the batch whose replicas are whole nodes or equal parts of one (sim::replica_world).
[[nodiscard]] std::vector<int> data_parallel_degrees(const sim::TrainingJob& job, const topo::Topology& topology,
                                                     int tp);

// How the world is split before the attention knobs: tensor-parallel degree, data-parallel
// replicas and the sequences each replica runs at once.
struct ParallelLayout {
  int tp = 1;
  int dp = 1;
  int micro_batch = 1;
  friend bool operator==(const ParallelLayout&, const ParallelLayout&) = default;
};
// Every layout the job and cluster allow, in a fixed order (tp, then dp, then the replica's whole
// share of the batch before one sequence at a time); `only_tp`, `only_dp` > 0 fix that degree (one
// the job or cluster cannot take makes candidates that say why they do not apply).
[[nodiscard]] std::vector<ParallelLayout> parallel_layouts(const sim::TrainingJob& job, const topo::Topology& topology,
                                                           int only_tp, int only_dp);

// The family's candidates at one layout: a searched family's every knob; a peer's preset (and its
// zigzag variant) at micro-batches of one sequence, and nothing at other micro-batch sizes. With
// `only_checkpoint` every candidate checkpoints by that policy: the searched families search the
// other knobs, the peers take it in place of their own default (burst plan --checkpoint).
[[nodiscard]] std::vector<sim::TrainingStrategy> family_candidates(const sim::FamilyTraits& family,
                                                                   const sim::TrainingJob& job,
                                                                   const topo::Topology& topology,
                                                                   const ParallelLayout& layout,
                                                                   std::optional<CheckpointPolicy> only_checkpoint);
// The few candidates that rank a layout before its knobs are searched: the family's preset at that
// layout under each checkpoint policy without stash fractions (or `only_checkpoint`), with the LM
// head whole or in the finest chunks, with and without offload.
[[nodiscard]] std::vector<sim::TrainingStrategy> layout_probes(const sim::FamilyTraits& family,
                                                               const sim::TrainingJob& job,
                                                               const topo::Topology& topology,
                                                               const ParallelLayout& layout,
                                                               std::optional<CheckpointPolicy> only_checkpoint);

}  // namespace burst::planner
