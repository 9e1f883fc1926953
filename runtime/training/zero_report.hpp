// The ZeRO and memory parts of a training run's report: what the stage shards and which
// collectives a step runs, and each memory item the run measured beside the plan's prediction.
//
// memory_items: every item of the plan's prediction (plan:/predicted/memory_bytes_per_gpu), in
// the plan's order, beside the run's peak of the same use (the largest rank's, over the steps),
// in both columns of the ledger: as this run holds it and as the GPU step lays it out
// (memory_ledger.hpp); measured is empty where this runtime holds no such thing (the reserve for
// a GPU's context, workspaces, NCCL buffers and fragmentation); then a "total" row: the peak against the predicted
// total without the reserve. Where a column and the prediction differ by more than 10% its note says why, from what is
// known to differ: the CPU runtime holds every tensor in fp32 (a bf16 plan's attention tensors are bf16-rounded, yet
// stored as fp32) and its fp32 parameters are AdamW's master copy, so the optimizer holds m and v (8 bytes a parameter)
// where the plan counts 12 (neither applies to the GPU layout); ZeRO 3 gathers one unit at a time where the plan counts
// two layers (one prefetched); the LM head turns one fp32 logits buffer into its gradient in
// place where the plan counts logits, softmax and gradient. An item that differs for none of
// these reasons says so.
//
// zero_summary: the stage, its shard, where the model state lives, the offload, the mean time a
// step spent in its collectives, and each collective a step runs (stages 2-3's in each of its
// micro-batches) with the bytes of the whole buffers it fills or reduces (a ring algorithm sends (P - 1) / P of that
// per rank, twice for an all-reduce): parameters in the state's working dtype (fp32 on the host, bf16 on the GPU),
// gradients fp32. training_report.hpp writes both as JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "runtime/training/memory_ledger.hpp"
#include "runtime/training/shard_map.hpp"

namespace burst::rt {

// Measured and predicted agree when within this fraction of the prediction.
inline constexpr double kMemoryTolerance = 0.10;

// One column of the run's memory: each use's peak and the total's.
struct MeasuredMemory {
  MemoryLedger::Breakdown by_use{};
  std::uint64_t peak = 0;
};

// One predicted memory item beside the run's two columns.
struct MemoryItemRow {
  struct Column {
    std::optional<double> measured;  // bytes; empty where this runtime holds no such thing
    std::optional<double> ratio;     // measured / predicted; empty where it is not finite
    std::string note;                // why they differ beyond kMemoryTolerance; empty where they agree
  };
  std::string item;
  double predicted = 0;
  Column host;    // as this run holds it
  Column on_gpu;  // as the GPU step lays it out
};

[[nodiscard]] std::vector<MemoryItemRow> memory_items(const plan::Plan& plan, const MeasuredMemory& host,
                                                      const MeasuredMemory& on_gpu);

struct ZeroCollective {
  std::string collective;  // "all-reduce", "all-gather", "reduce-scatter"
  std::string of;          // what it moves and when
  int calls = 0;
  std::uint64_t bytes = 0;
};

struct ZeroSummary {
  int stage = 0;
  int ranks = 1;
  std::uint64_t total_floats = 0, shard_floats = 0;
  std::string state;                   // where the model state lives
  std::optional<std::string> offload;  // what the plan offloads to the host, if it does
  double collective_s = 0;             // mean per step
  std::vector<ZeroCollective> collectives_per_step;
};

// `parameter_bytes`: bytes of a parameter as the all-gathers move it; `state_on_gpu`: whether
// the model state lives in GPU memory (zero_model.hpp).
[[nodiscard]] ZeroSummary zero_summary(const plan::Plan& plan, const ShardMap& shards, double collective_s,
                                       std::size_t parameter_bytes, bool state_on_gpu);

}  // namespace burst::rt
