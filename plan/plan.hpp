// The plan contract, "schema": "burst.plan/2": what the planner decides and the runtime obeys.
//
// A plan is self-contained: the job (model dimensions, sequence, mask, memory budget), the
// cluster it was made for (the whole burst.topology/1 document, so a plan can be explained,
// reported or replayed without the original file), the chosen strategy with every knob, the
// rank placement and ring orders, the prediction, and the best candidate of every other
// strategy family with why it lost or cannot run. This library depends on common only, so
// the runtime can read plans without the simulator or the search.
//
// JSON is ordered and written the same way every time: the same plan is the same bytes.
//
// The world is a product: tp x ulysses x cp x dp ranks (tensor parallelism innermost: ranks
// T k .. T k + T - 1 are one tensor-parallel group, inside a node; then the Ulysses groups, then
// the ring; data-parallel replicas outermost, replica d the d-th P / dp ranks). Every ring
// carries the heads of one tensor-parallel rank ("tp") and one Ulysses member of one replica
// ("dp"). burst.plan/2 adds "tp", "dp" and "micro_batch" to the strategy and "tp", "dp" to each
// ring; burst.plan/1 documents are still read, as tp 1 and dp 1 with the batch one micro-batch
// (docs/plan-format.md). A /2 document without them is refused by pointer: re-plan it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/json_reader.hpp"
#include "common/kernel_paths.hpp"
#include "common/model_spec.hpp"
#include "common/parallelism.hpp"
#include "common/strategy_knobs.hpp"

namespace burst::plan {

inline constexpr const char* kSchema = "burst.plan/2";
inline constexpr const char* kSchemaV1 = "burst.plan/1";  // read, never written

struct Job {
  ModelSpec model;
  std::int64_t seq = 0;  // tokens per sequence
  int batch = 1;         // sequences per optimizer step (the global batch)
  std::string dtype = "bf16";
  // "fp8": the layers' linear layers run FP8 GEMMs (TransformerEngine's fp8_autocast, torchao's
  // float8), as priced and as the exports write them; "": in the job's dtype. burst run runs
  // only the latter.
  std::string linears;
  Mask mask;
  double memory_budget_bytes = 0;  // per GPU; 0: the GPU's memory
  double memory_margin_bytes = 0;  // of the budget kept free (--memory-margin), so a replan keeps it too
  std::string only_family;         // the search was limited to this family ("": all), so a replan is too
  int only_tp = 0;                 // ... and to this tensor-parallel degree (0: every one the node allows)
  int only_dp = 0;                 // ... and to this data-parallel degree (0: every one the batch allows)
  // Every family was priced with this checkpoint policy (--checkpoint: "none", "full" or
  // "attn_stash"), so a replan is too; "": each family's own.
  std::string only_checkpoint;
  // The CUDA attention kernels' implementation the plan was priced for and `burst run` runs
  // (common/kernel_paths.hpp): "auto", the device's default, or one by name (--kernel-path).
  std::string kernel_path{kernel_paths::kAuto};
  friend bool operator==(const Job&, const Job&) = default;
};

// The chosen family and every knob (common/strategy_knobs.hpp): the attention knobs (here
// inner is always the inner ring's size, the whole ring when flat) and the training knobs,
// plus the ring's shape.
struct Strategy : AttentionKnobs, TrainingKnobs {
  std::string name;           // family: burst, burst-usp, megatron-cp, ds-ulysses, ...
  int cp = 1;                 // context-parallel ring size (ring ranks)
  int outer = 1;              // double ring: outer size (flat: 1)
  Strategy() { inner = cp; }  // a flat ring's inner size is the whole ring
  friend bool operator==(const Strategy&, const Strategy&) = default;
};

struct RankPlacement {
  int rank = 0, node = 0, local = 0;
  friend bool operator==(const RankPlacement&, const RankPlacement&) = default;
};

struct Ring {
  std::string level;       // "flat", "intra" or "inter"
  int member = 0;          // the Ulysses member the ring belongs to
  std::vector<int> order;  // world ranks; each receives from the one before it
  int tp = 0;              // the tensor-parallel rank whose heads the ring carries
  int dp = 0;              // the data-parallel replica it belongs to
  friend bool operator==(const Ring&, const Ring&) = default;
};

// One named figure of a breakdown, in the order the producer chose.
struct Item {
  std::string name;
  double value = 0;
  friend bool operator==(const Item&, const Item&) = default;
};

struct Prediction {
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;
  double exposed_comm_s = 0;       // per iteration: attention rings + ZeRO collectives
  double memory_total_bytes = 0;   // per GPU
  std::vector<Item> memory_bytes;  // per GPU, itemised (params, gradients, ...)
  std::vector<Item> time_s;        // per iteration, itemised (dense_compute, ...)
  double comm_bytes_intra = 0;     // per GPU per iteration
  double comm_bytes_inter = 0;
  double attention_forward_s = 0;  // one attention layer, as the runtime measures it
  double attention_backward_s = 0;
  double forward_pass_s = 0;   // the step's forward and backward passes, as the runtime times them
  double backward_pass_s = 0;  // (0 in plans written before they were predicted)
  friend bool operator==(const Prediction&, const Prediction&) = default;
};

struct Alternative {
  Strategy strategy;
  bool feasible = false;
  std::string reason;    // why it is infeasible (memory, not applicable), or "" when feasible
  Prediction predicted;  // zero when the strategy cannot run at all
  friend bool operator==(const Alternative&, const Alternative&) = default;
};

struct Plan {
  std::string generator;      // "burst <version>"
  std::string topology_name;  // "a800-4hca x4"
  std::string topology_hash;
  Json cluster;  // the burst.topology/1 document the plan was made for
  Job job;
  Strategy strategy;
  std::vector<RankPlacement> ranks;
  std::vector<Ring> rings;
  Prediction predicted;
  std::vector<Alternative> alternatives;  // best candidate of every other family
  // The best candidate (of the families the search allowed) at every parallel layout it scored:
  // each tensor-parallel degree, data-parallel degree and micro-batch, best first. Empty in
  // plans written before this list existed.
  std::vector<Alternative> layouts;
  int candidates_evaluated = 0;
  friend bool operator==(const Plan&, const Plan&) = default;
};

// The micro-batches each replica runs per optimizer step, its gradients accumulating over them:
// batch / (dp x micro_batch) (the reader checks that they divide it).
[[nodiscard]] inline int accumulation_steps(const Plan& plan) {
  const int per_step = std::max(1, plan.strategy.dp) * std::max(1, plan.strategy.micro_batch);
  return std::max(1, plan.job.batch / per_step);
}

[[nodiscard]] Json to_json(const Plan& plan);
// Every problem at once, each with its JSON pointer (burst::Error); `source` names the file.
[[nodiscard]] Plan plan_from_json(const Json& doc, const std::string& source);
// Reads and parses a plan file (errors carry the path and line:col for bad JSON).
[[nodiscard]] Plan read_plan(const std::string& path);
// Writes atomically (a temporary beside it, then rename): a crash never leaves half a plan.
void write_plan(const Plan& plan, const std::string& path);

}  // namespace burst::plan
