// The ZeRO and memory parts of a training run's report: what the stage shards and which
// collectives a step runs, and each memory item the run measured beside the plan's prediction.
//
// memory_items: every item of the plan's prediction (plan:/predicted/memory_bytes_per_gpu), in
// the plan's order, beside the run's peak of the same use (the largest rank's, over the steps),
// in both columns of the ledger: as this run holds it and as the GPU step lays it out
// (memory_ledger.hpp):
//   {"item", "predicted", "measured" (null where this runtime holds no such thing: the reserve
//    for a GPU's context and fragmentation), "ratio", "note", "on_gpu", "on_gpu_ratio", "on_gpu_note"}
// then a "total" row: the peak against the predicted total without the reserve. Where a column
// and the prediction differ by more than 10% its note says why, from what is known to differ:
// the CPU runtime holds every tensor in fp32 (a bf16 plan's attention tensors are bf16-rounded,
// yet stored as fp32) and its fp32 parameters are AdamW's master copy, so the optimizer holds m
// and v (8 bytes a parameter) where the plan counts 12 (neither applies to the GPU layout); ZeRO
// 3 gathers one unit at a time where the plan counts two layers (one prefetched); the LM head
// turns one fp32 logits buffer into its gradient in place where the plan counts logits, softmax
// and gradient. An item that differs for none of these reasons says so.
//
// zero_json: {"stage", "ranks", "shard_floats", "total_floats", "state" (where the model state
// lives), "offload", "collective_s" (mean per step), "collectives_per_step": [{"collective",
// "of", "calls", "bytes"}]}, bytes being the whole buffers the calls fill or reduce (a ring
// algorithm sends (P - 1) / P of that per rank, twice for an all-reduce): parameters in the
// state's working dtype (fp32 on the host, bf16 on the GPU), gradients fp32.
#pragma once

#include <cstdint>

#include "common/json_reader.hpp"
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

[[nodiscard]] Json memory_items(const plan::Plan& plan, const MeasuredMemory& host, const MeasuredMemory& on_gpu);

// `parameter_bytes`: bytes of a parameter as the all-gathers move it; `state_on_gpu`: whether
// the model state lives in GPU memory (zero_model.hpp).
[[nodiscard]] Json zero_json(const plan::Plan& plan, const ShardMap& shards, double collective_s,
                             std::size_t parameter_bytes, bool state_on_gpu);

}  // namespace burst::rt
