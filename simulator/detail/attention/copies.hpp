// The copies of one attention layer: under tensor parallelism of T and D data-parallel replicas
// the strategy runs T x D times side by side, copy c (tensor-parallel rank c % T of replica
// c / T) on its own GPUs (topology_gpu), each the same task graph over its own world ranks.
//
// Copies never share a GPU, but they may share links: the tensor-parallel copies of a node
// leave it through NICs two GPUs may share (a800-4hca), or through the node's spine uplink on a
// fat tree. Where every copy's routes are alike (for each of the graph's (source, destination)
// pairs, the same links by kind, bandwidth, latency and sharing, in order) and no link two
// copies cross could limit them (it is not shared, or the links feeding it, or those it feeds,
// cannot carry more than it can: a non-blocking spine), the copies cannot slow one another and
// take the same time: one copy simulated is the whole layer, its byte and FLOP totals times the
// copy count. This is the equivalence class the layer simulation uses (layer_simulation.cpp);
// copies_not_equivalent() says why not where it does not hold.
#pragma once

#include <functional>
#include <string>

#include "simulator/attention/attention.hpp"
#include "simulator/attention/ring.hpp"

namespace burst::sim {

// The topology GPU of world rank `rank` in copy `copy` of this shape on `world` (attention_world).
[[nodiscard]] std::function<int(int rank, int copy)> copy_gpus(const AttentionShape& shape, const World& world);

// The first `copies` copies of `one` (lowered on `world`, ranks 0 .. world.size() - 1) placed on
// the topology's GPUs by copy_gpus: every copy for the whole layer, or copy 0 alone where it
// stands for all. FLOPs per GPU, 0 on the GPUs no placed copy runs on.
[[nodiscard]] LoweredAttention place_copies(const LoweredAttention& one, const AttentionShape& shape,
                                            const World& world, const topo::Topology& topology, int copies);

// "" when one copy of `one` (lowered on `world`, ranks 0 .. world.size() - 1) stands for all of
// them; otherwise the first reason it does not ("copies 0 and 1 both cross n0:nic0-up").
[[nodiscard]] std::string copies_not_equivalent(const LoweredAttention& one, const AttentionShape& shape,
                                                const World& world, const topo::Topology& topology);

// The same test for any `count` placements of `one`'s transfers, placement k of rank r on GPU
// gpu_of(r, k): the windows of a folded ring (ring_fold.hpp) are placements shifted by a window.
// `noun`: what a placement is called in the reason ("copy", "window").
[[nodiscard]] std::string placements_not_equivalent(const LoweredAttention& one, int count,
                                                    const std::function<int(int rank, int placement)>& gpu_of,
                                                    const topo::Topology& topology, const std::string& noun);

}  // namespace burst::sim
