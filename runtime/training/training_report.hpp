// What a training run measured, as a type: the plan it ran, the run's model, data and schedule,
// every step's loss, time, gradient norm and learning rate, the memory each rank held beside the
// plan's items, ZeRO's collectives, the device traffic per step and the check against one rank.
//
// TrainingRun fills it on rank 0 (training_run.cpp) and the CLI prints it field by field;
// to_json() is the `burst run --json` document, whose keys scripts read
// (docs/runtime-training.md):
//   plan            {strategy, ranks, ring, layout, backward, mask, checkpoint, kept_fraction,
//                    lm_head_chunks}
//   run             {model, parameters, seq, first_step, steps, seed, lr, lr_schedule, resumed_from,
//                    device, saved_to, recomputed_rows_per_rank, precision, overlap,
//                    data: {source, documents, bytes}}
//   losses, step_time_s, tokens_per_s, grad_norms, lrs      one value a step
//   peak_memory_bytes, peak_memory_bytes_by_rank
//   memory, memory_on_gpu   {model_state, model_state_by_use, at_peak, peak_by_use} per column
//                           (memory_on_gpu adds peak and, on a GPU, measured_by_cuda)
//   memory_items    [{item, predicted, measured, ratio, note, on_gpu, on_gpu_ratio, on_gpu_note}]
//   zero            {stage, ranks, total_floats, shard_floats, state, offload, collective_s,
//                    collectives_per_step: [{collective, of, calls, bytes}]}
//   predicted_memory_bytes, predicted_memory {item: bytes}, predicted {step_time_s}
//   measured        {step_s_median, forward_s, backward_s, recompute_s, attention_s, loss_s, dense_s,
//                    optimizer_s, sequence_parallel_bytes}
//   device_traffic  {scope, first_step, later_steps_max (runs of two steps or more)}
//   check           {loss, reference_loss, loss_rel_err, max_rel_err_grad, worst_tensor,
//                    rel_err_grad_by_tensor, tolerance, passed}   (--check only)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/json_reader.hpp"
#include "common/model_spec.hpp"
#include "plan/plan.hpp"
#include "runtime/kernels/device_traffic.hpp"
#include "runtime/kernels/kernel_memory.hpp"
#include "runtime/schedule/precision.hpp"
#include "runtime/training/lr_schedule.hpp"
#include "runtime/training/memory_ledger.hpp"
#include "runtime/training/zero_model.hpp"
#include "runtime/training/zero_report.hpp"

namespace burst::rt {

// What rank 0 hears after every step (TrainingOptions::progress).
struct StepProgress {
  std::int64_t step = 0, last_step = 0;
  double loss = 0, step_s = 0, tokens_per_s = 0, grad_norm = 0;
  std::uint64_t peak_memory_bytes = 0;  // rank 0's, in the host column
};

// The first step's loss and weight gradients against the same step on one rank.
struct TrainingCheck {
  double loss = 0, reference_loss = 0, loss_rel_err = 0;
  double max_rel_err_grad = 0;
  std::string worst_tensor;
  // The gradient norm the optimizer clipped with (every part's, the replicated tensors once)
  // against the single-rank gradients' norm.
  double grad_norm = 0, reference_grad_norm = 0, grad_norm_rel_err = 0;
  std::vector<std::pair<std::string, double>> rel_err_grad_by_tensor;
  double tolerance = 0;
  bool passed = false;
};

// One column of the memory ledger, as the run measured it on its largest rank.
struct MemoryColumn {
  ZeroModel::Resident model_state;  // between steps
  MemoryLedger::Breakdown at_peak{}, peak_by_use{};
};

struct TrainingReport {
  struct PlanRun {
    std::string strategy;
    int ranks = 0;
    std::string ring;  // "double 2x4"
    std::string layout, backward, mask, checkpoint;
    double kept_fraction = 0;  // seq_stash's
    int lm_head_chunks = 1;
    int tp = 1;             // tensor-parallel ranks a group
    int dp = 1;             // data-parallel replicas
    int batch = 1;          // sequences an optimizer step, over every replica
    int micro_batch = 1;    // sequences side by side in one micro-batch
    int micro_batches = 1;  // each replica's a step, its gradients accumulating
  } plan;
  struct Run {
    ModelSpec model;
    std::uint64_t parameters = 0;
    std::int64_t seq = 0, first_step = 0, steps = 0;
    std::uint64_t seed = 0;
    double lr = 0;  // the peak
    LrSchedule lr_schedule;
    std::string resumed_from, device, saved_to;
    std::int64_t recomputed_rows_per_rank = 0;
    AttentionPrecision precision;
    bool overlap = true;
    struct Data {
      std::string source;
      std::uint64_t documents = 0, bytes = 0;
    } data;
  } run;
  struct Step {
    double loss = 0, step_s = 0, tokens_per_s = 0, grad_norm = 0, lr = 0;
  };
  std::vector<Step> steps;
  std::uint64_t peak_memory_bytes = 0;  // the largest rank's, host column
  std::vector<std::uint64_t> peak_memory_bytes_by_rank;
  MemoryColumn memory, memory_on_gpu;
  std::uint64_t peak_on_gpu = 0;                    // the largest rank's, GPU layout column
  std::optional<DeviceMemoryUse> measured_by_cuda;  // a GPU run's pool and device, the largest rank's
  std::vector<MemoryItemRow> memory_items;
  ZeroSummary zero;
  double predicted_memory_bytes = 0;
  std::vector<plan::Item> predicted_memory;
  struct Measured {
    double step_s_median = 0, forward_s = 0, backward_s = 0, recompute_s = 0, attention_s = 0, loss_s = 0;
    // forward + backward less ring attention, the recompute, and the LM head and loss: the dense
    // layers' products, norms, RoPE, SwiGLU, residuals, the embedding, tensor parallelism's
    // collectives and any wait for ZeRO's gathers inside the passes.
    double dense_s = 0;
    double optimizer_s = 0;  // host time of the optimizer step (on a GPU, its last kernels may still run)
    // Bytes rank 0 sent a step in the sequence-parallel all-gathers and reduce-scatters (tp > 1).
    std::uint64_t sequence_parallel_bytes = 0;
  } measured;
  double predicted_step_s = 0;
  struct Traffic {
    DeviceTraffic first_step;                      // fills the pools and connects the rings
    std::optional<DeviceTraffic> later_steps_max;  // the most any later step moved of each kind
  } device_traffic;
  std::optional<TrainingCheck> check;

  [[nodiscard]] Json to_json() const;
};

// The JSON of each part, where another document shows it too.
[[nodiscard]] Json to_json(const ModelSpec& model);
[[nodiscard]] Json to_json(const LrSchedule& schedule);
[[nodiscard]] Json to_json(const DeviceTraffic& traffic);
// Bytes of each memory use, by its name ("activations", "lm_head", ...).
[[nodiscard]] Json memory_uses_json(const MemoryLedger::Breakdown& bytes);
// The inverse of to_json(DeviceTraffic), for a report read back from `burst run --json`.
[[nodiscard]] DeviceTraffic device_traffic_from_json(const Json& j);

}  // namespace burst::rt
