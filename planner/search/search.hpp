// The search: score every candidate of every family with the whole-iteration model and keep,
// per family, the best one, then choose among the families.
//
// A candidate is feasible when the strategy applies to the job and cluster and its memory per
// GPU fits the budget (the GPU's memory unless --memory-budget says less). The best of a
// family is its fastest feasible candidate (tokens/s per GPU; ties: less memory, then the
// earlier candidate); when none is feasible, the applicable candidate needing the least memory
// (so the report can say by how much it misses), else the preset with why it cannot run.
// The plan is the fastest family best among the allowed families.
//
// A family is searched over its parallel layouts (tensor- and data-parallel degrees, micro-batch)
// and its knobs at each. When the global batch allows more layouts than kLayoutsSearched (4, every
// tensor-parallel degree of an 8-GPU node), each layout is first ranked by a few probes (the
// family's preset under each checkpoint policy, LM-head chunking and offload: layout_probes) and
// only the best four are searched knob by knob; the probes count as scored candidates.
//
// The attention layer depends only on the attention knobs, so its simulation is shared by
// every candidate with the same ones (checkpointing, LM-head chunks and offload are closed
// forms on top). A step budget caps the candidates scored; the order is fixed, so the result
// is the same every time.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/kernel_paths.hpp"
#include "simulator/training/training.hpp"

namespace burst::planner {

struct SearchRequest {
  sim::TrainingJob job;
  double memory_budget_bytes = 0;  // 0: the GPU's memory
  double memory_margin_bytes = 0;  // kept free: a candidate fits when its total leaves this much of the budget
  std::string only_family;         // "": choose among all families
  int only_tp = 0;                 // 0: every tensor-parallel degree the node allows; else this one
  int only_dp = 0;                 // 0: every data-parallel degree the batch allows; else this one
  // Set: every family checkpoints by this policy (none, full or attn_stash), in place of the peers'
  // defaults and of the policies burst's families search; unset: each family's own.
  std::optional<CheckpointPolicy> checkpoint;
  std::string kernel_path{
      kernel_paths::kAuto};         // the CUDA kernel path `simulation.models` price (recorded in the plan)
  sim::LayerSimOptions simulation;  // engine and cost models
  int max_candidates = 20000;       // the step budget
  bool progress = false;            // a progress line on stderr for long searches
};

struct Evaluated {
  std::string family;
  sim::IterationSimulation sim;
  bool feasible = false;
  std::string reason;  // infeasible: why ("needs 97 GiB per GPU, budget 80 GiB", not applicable: ...)
};

struct SearchResult {
  std::vector<Evaluated> best_per_family;  // in sim::family_names() order
  // The best candidate at each parallel layout (tp, dp, micro-batch) scored, of the families
  // allowed (only_family), best first: the layouts searched knob by knob, and the others by
  // their probes.
  std::vector<Evaluated> best_per_layout;
  int chosen = -1;  // index into best_per_family, -1: nothing fits
  int candidates_evaluated = 0;
  bool stopped_at_budget = false;
  double memory_budget_bytes = 0;  // the budget applied
  [[nodiscard]] const Evaluated* chosen_plan() const {
    return chosen < 0 ? nullptr : &best_per_family[static_cast<std::size_t>(chosen)];
  }
};

[[nodiscard]] SearchResult search(const SearchRequest& request, const topo::Topology& topology);

// A checkpoint policy every family can be priced with (SearchRequest::checkpoint): none, full or
// attn_stash. seq_stash, burst's own on a striped layout, and anything else are a burst::Error
// naming `field`.
[[nodiscard]] CheckpointPolicy parse_checkpoint_for_every_family(std::string_view text, std::string_view field);

}  // namespace burst::planner
