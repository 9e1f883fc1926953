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
// Every family is tried at every tensor-parallel degree the job and the node allow
// (tensor_parallel_degrees): 1, and where a node's GPUs are joined by NVLink every degree above 1
// dividing its GPUs, both head counts and the MLP width. Tensor parallelism stays inside a node,
// so the context-parallel world is the other factor: the Ulysses degrees divide the node's GPUs
// over T, the ring is P / (T U).
//
// Which family is searched and which is taken as it ships is a trait of the family
// (simulator/attention/families.hpp). The order is fixed, so the search is deterministic:
// ties go to the earlier candidate.
#pragma once

#include <string>
#include <vector>

#include "simulator/training/training.hpp"

namespace burst::planner {

// The tensor-parallel degrees the search tries, 1 first.
[[nodiscard]] std::vector<int> tensor_parallel_degrees(const sim::TrainingJob& job, const topo::Topology& topology);

// Throws burst::Error for an unknown family (with did-you-mean). `only_tp` > 0: that degree
// alone (a degree the job or node cannot take makes candidates that say why they do not apply).
[[nodiscard]] std::vector<sim::TrainingStrategy> family_candidates(const std::string& family,
                                                                   const sim::TrainingJob& job,
                                                                   const topo::Topology& topology, int only_tp);

}  // namespace burst::planner
