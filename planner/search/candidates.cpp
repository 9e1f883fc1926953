// Enumerating a family's candidates (see candidates.hpp).
#include "planner/search/candidates.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/text.hpp"
#include "simulator/attention/ring.hpp"

namespace burst::planner {
namespace {

std::vector<int> divisors(int n) {
  std::vector<int> list;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) list.push_back(d);
  }
  return list;
}

// Ulysses degrees to try: 1 for a pure ring family; otherwise every degree above 1 that
// divides a node and both head counts (or the preset's when none does, so the family still
// reports why).
std::vector<int> ulysses_degrees(const sim::FamilyTraits& family, const sim::TrainingJob& job,
                                 const topo::Topology& topology, int tp, int preset) {
  if (family.ulysses == sim::UlyssesRule::None) return {1};
  std::vector<int> list;
  for (const int u : divisors(topology.gpus_per_node() / tp)) {
    if (u > 1 && job.model.heads / tp % u == 0 && job.model.kv_heads / tp % u == 0) list.push_back(u);
  }
  if (list.empty()) list.push_back(preset);
  return list;
}

// (ring kind, inner size): the flat ring, then double rings of every inner size 2..R/2 that
// divides R.
std::vector<std::pair<RingKind, int>> ring_shapes(int ring) {
  std::vector<std::pair<RingKind, int>> list{{RingKind::Flat, 0}};
  for (const int inner : divisors(ring)) {
    if (inner >= 2 && inner <= ring / 2) list.emplace_back(RingKind::Double, inner);
  }
  return list;
}

CheckpointConfig fixed_checkpoint(CheckpointPolicy policy) { return {.policy = policy, .kept_fraction = 0}; }

// The checkpoint configurations a layout allows, or only `only` where the request fixes the policy.
std::vector<CheckpointConfig> checkpoints(Layout layout, std::optional<CheckpointPolicy> only) {
  if (only) return {fixed_checkpoint(*only)};
  std::vector<CheckpointConfig> list;
  for (const CheckpointPolicy p : {CheckpointPolicy::None, CheckpointPolicy::AttnStash, CheckpointPolicy::Full}) {
    CheckpointConfig c;
    c.policy = p;
    list.push_back(c);
  }
  if (layout == Layout::Striped) {
    for (const double kept : {0.75, 0.5, 0.25}) {
      CheckpointConfig c;
      c.policy = CheckpointPolicy::SeqStash;
      c.kept_fraction = kept;
      list.push_back(c);
    }
  }
  return list;
}

std::vector<int> lm_head_chunk_counts(std::int64_t local_tokens) {
  std::vector<int> list{1};
  for (const std::int64_t chunk_tokens : {16384, 4096, 1024}) {
    const auto n = static_cast<int>(std::max<std::int64_t>(1, (local_tokens + chunk_tokens - 1) / chunk_tokens));
    if (std::find(list.begin(), list.end(), n) == list.end()) list.push_back(n);
  }
  return list;
}

std::vector<sim::TrainingStrategy> searched(const sim::FamilyTraits& family, const sim::TrainingJob& job,
                                            const topo::Topology& topology, const ParallelLayout& layout,
                                            std::optional<CheckpointPolicy> only_checkpoint) {
  sim::TrainingStrategy preset = sim::training_preset(family.name, job, topology, layout.tp, layout.dp);
  preset.micro_batch = layout.micro_batch;
  const int tp = layout.tp;
  const auto local_tokens =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(sim::local_tokens(job, topology, preset)));
  std::vector<sim::TrainingStrategy> list;
  for (const int u : ulysses_degrees(family, job, topology, tp, preset.attention.ulysses)) {
    const int ring = std::max(1, sim::replica_world(topology, tp, layout.dp).size() / u);
    for (const auto& [kind, inner] : ring_shapes(ring)) {
      for (const Layout order : {Layout::Zigzag, Layout::Striped}) {
        for (const BackwardMode backward : {BackwardMode::QRing, BackwardMode::KvRing}) {
          for (const CheckpointConfig& checkpoint : checkpoints(order, only_checkpoint)) {
            for (const int chunks : lm_head_chunk_counts(local_tokens)) {
              for (const bool offload : {false, true}) {
                sim::TrainingStrategy s = preset;
                s.attention.ulysses = u;
                s.attention.ring = kind;
                s.attention.inner = inner;
                s.attention.layout = order;
                s.attention.backward = backward;
                s.checkpoint = checkpoint;
                s.lm_head_chunks = chunks;
                s.zero.offload = offload;
                list.push_back(s);
              }
            }
          }
        }
      }
    }
  }
  return list;
}

}  // namespace

std::vector<int> tensor_parallel_degrees(const sim::TrainingJob& job, const topo::Topology& topology) {
  std::vector<int> list{1};
  const int g = topology.gpus_per_node();
  if (g < 2 || topology.intra_node_worst().cls != topo::PathClass::NVL) return list;
  for (const int t : divisors(g)) {
    if (t > 1 && job.model.heads % t == 0 && job.model.kv_heads % t == 0 && job.model.ffn % t == 0) {
      list.push_back(t);
    }
  }
  return list;
}

std::vector<int> data_parallel_degrees(const sim::TrainingJob& job, const topo::Topology& topology, int tp) {
  std::vector<int> list;
  for (const int d : divisors(std::max(1, job.batch))) {
    if (d == 1 || sim::replica_world(topology, tp, d).size() > 0) list.push_back(d);
  }
  return list;
}

std::vector<ParallelLayout> parallel_layouts(const sim::TrainingJob& job, const topo::Topology& topology, int only_tp,
                                             int only_dp) {
  std::vector<ParallelLayout> list;
  for (const int tp : only_tp > 0 ? std::vector<int>{only_tp} : tensor_parallel_degrees(job, topology)) {
    for (const int dp : only_dp > 0 ? std::vector<int>{only_dp} : data_parallel_degrees(job, topology, tp)) {
      const int share = std::max(1, job.batch / dp);
      list.push_back({tp, dp, share});
      if (share > 1) list.push_back({tp, dp, 1});
    }
  }
  return list;
}

std::vector<sim::TrainingStrategy> family_candidates(const sim::FamilyTraits& family, const sim::TrainingJob& job,
                                                     const topo::Topology& topology, const ParallelLayout& layout,
                                                     std::optional<CheckpointPolicy> only_checkpoint) {
  if (family.searched) return searched(family, job, topology, layout, only_checkpoint);
  if (layout.micro_batch != 1) return {};
  std::vector<sim::TrainingStrategy> list{sim::training_preset(family.name, job, topology, layout.tp, layout.dp)};
  if (only_checkpoint) list.front().checkpoint = fixed_checkpoint(*only_checkpoint);
  if (family.also_zigzag_layout) {
    sim::TrainingStrategy zigzag = list.front();
    zigzag.attention.layout = Layout::Zigzag;
    list.push_back(zigzag);
  }
  return list;
}

std::vector<sim::TrainingStrategy> layout_probes(const sim::FamilyTraits& family, const sim::TrainingJob& job,
                                                 const topo::Topology& topology, const ParallelLayout& layout,
                                                 std::optional<CheckpointPolicy> only_checkpoint) {
  sim::TrainingStrategy preset = sim::training_preset(family.name, job, topology, layout.tp, layout.dp);
  preset.micro_batch = layout.micro_batch;
  const std::vector<int> chunks = lm_head_chunk_counts(
      std::max<std::int64_t>(1, static_cast<std::int64_t>(sim::local_tokens(job, topology, preset))));
  std::vector<sim::TrainingStrategy> list;
  for (const CheckpointConfig& checkpoint : checkpoints(Layout::Zigzag, only_checkpoint)) {
    for (const int chunk_count : {chunks.front(), chunks.back()}) {
      for (const bool offload : {false, true}) {
        sim::TrainingStrategy s = preset;
        s.checkpoint = checkpoint;
        s.lm_head_chunks = chunk_count;
        s.zero.offload = offload;
        list.push_back(s);
      }
    }
  }
  return list;
}

}  // namespace burst::planner
