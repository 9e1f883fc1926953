// Measured memory beside the plan's, and the ZeRO section of the report (see zero_report.hpp).
#include "runtime/training/zero_report.hpp"

#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "runtime/schedule/precision.hpp"

namespace burst::rt {
namespace {

// Why this runtime's `item` is known to differ from the planner's, "; "-separated, in `column`;
// `larger`: the column above the prediction (fp32 storage explains only that direction).
std::string known_differences(const std::string& item, const plan::Plan& plan, bool larger, Column column) {
  const std::size_t e = dtype_size(precision_of(plan).activations);
  const bool none = plan.strategy.checkpoint.policy == CheckpointPolicy::None;
  const bool host = column == Column::Host;
  std::string out;
  const auto add = [&out](std::string_view why) { out.append(out.empty() ? "" : "; ").append(why); };
  if (host && larger && e != 4 && item != "optimizer" && item != "lm_head") {
    add(fmt::format("held in fp32 here (4 bytes a value), the plan counts {} ({} bytes)", plan.job.dtype, e));
  }
  if (item == "params" && plan.strategy.zero.stage >= 3) {
    add(plan.strategy.overlap
            ? "ZeRO 3 here holds two gathered units at once (one prefetched), the embedding or the head among them"
            : "ZeRO 3 here gathers one unit at a time (the plan does not overlap), the plan counts two layers "
              "gathered");
  }
  if ((item == "params" || item == "gradients") && !host && !larger && plan.strategy.zero.offload) {
    add("the plan offloads: a GPU run keeps the fp32 parameters and gradients on the host too (page-locked) and holds "
        "the units it has bound, the plan keeps them on the GPU");
  }
  if (item == "gradients" && !host && larger && e != 4) {
    add(fmt::format(
        "fp32 here (4 bytes a value: every chunk's and layer's share is summed in fp32), the plan counts {} bytes", e));
  }
  if (item == "gradients" && plan.strategy.zero.stage >= 2) {
    add("the full-size gradients of the unit whose backward runs live here until their reduce-scatter, "
        "the plan counts the shard alone");
  }
  if (item == "optimizer" && host && plan.strategy.zero.offload) {
    add("the plan offloads it to the host; this CPU runtime's memory is host memory, so it is held here");
  } else if (item == "optimizer" && host) {
    add("AdamW m and v here (8 bytes a parameter): the fp32 parameters are the master copy, which the plan "
        "counts in this item (12 bytes a parameter)");
  }

  if ((item == "activations" || item == "attention_stash") && none) {
    add("under checkpoint none the runtime counts O and lse with the activations, the plan as attention_stash");
  }
  if (item == "ring_buffers") {
    add("the runtime adds the kernels' fp32 workspace and, under Ulysses, fp32 head-split copies of every "
        "backward input and output");
  }
  if (item == "lm_head") {
    const std::string step = host || e == 4
                                 ? "one fp32 logits buffer turned into its gradient in place here (4 bytes a logit)"
                                 : fmt::format("fp32 logits and their {}-byte gradient ({} bytes a logit)", e, 4 + e);
    add(fmt::format("{}, the plan counts logits, their fp32 softmax and its gradient ({} bytes)", step, e + 8));
  }
  return out;
}

// The column's bytes, its ratio to the prediction, and the note where they differ by more than
// the tolerance.
MemoryItemRow::Column column_of(const std::string& item, double predicted, const plan::Plan& plan, double bytes,
                                Column column) {
  const double ratio = predicted > 0 ? bytes / predicted : (bytes > 0 ? INFINITY : 1.0);
  std::string why;
  if (std::fabs(ratio - 1.0) > kMemoryTolerance) {
    why = known_differences(item, plan, ratio > 1.0, column);
    if (why.empty())
      why = "none of the known differences applies: the runtime's buffers differ from the planner's model here";
  }
  return {bytes, std::isfinite(ratio) ? std::optional<double>(ratio) : std::nullopt, why};
}

}  // namespace

std::vector<MemoryItemRow> memory_items(const plan::Plan& plan, const MeasuredMemory& host,
                                        const MeasuredMemory& on_gpu) {
  std::vector<MemoryItemRow> items;
  double reserve = 0;
  for (const plan::Item& predicted : plan.predicted.memory_bytes) {
    const std::optional<MemoryUse> use = memory_use_named(predicted.name);
    if (!use) {
      if (predicted.name == "reserve") reserve = predicted.value;
      items.push_back(
          {predicted.name,
           predicted.value,
           {std::nullopt, std::nullopt,
            "not held by this runtime (a GPU's context, workspaces, NCCL buffers and allocator fragmentation)"},
           {}});
      continue;
    }
    const auto u = static_cast<std::size_t>(*use);
    items.push_back(
        {predicted.name, predicted.value,
         column_of(predicted.name, predicted.value, plan, static_cast<double>(host.by_use[u]), Column::Host),
         column_of(predicted.name, predicted.value, plan, static_cast<double>(on_gpu.by_use[u]), Column::Device)});
  }
  const double without_reserve = plan.predicted.memory_total_bytes - reserve;
  const auto share = [&](std::uint64_t peak) {
    return without_reserve > 0 ? std::optional<double>(static_cast<double>(peak) / without_reserve) : std::nullopt;
  };
  items.push_back({"total",
                   without_reserve,
                   {static_cast<double>(host.peak), share(host.peak),
                    "the peak per rank against the predicted total without the reserve"},
                   {static_cast<double>(on_gpu.peak), share(on_gpu.peak), ""}});
  return items;
}

ZeroSummary zero_summary(const plan::Plan& plan, const ShardMap& shards, double collective_s,
                         std::size_t parameter_bytes, bool state_on_gpu) {
  const int stage = plan.strategy.zero.stage;
  const std::uint64_t whole = float_bytes(shards.total());
  std::uint64_t padded = 0, layers_padded = 0;
  for (std::size_t u = 0; u < shards.unit_count(); ++u) {
    padded += shards.padded_size(u);
    if (u != 0 && u + 1 != shards.unit_count()) layers_padded += shards.padded_size(u);
  }
  const std::uint64_t padded_params = padded * parameter_bytes, padded_grads = float_bytes(padded);
  const std::uint64_t layers_params = layers_padded * parameter_bytes;
  const auto units = static_cast<int>(shards.unit_count());
  ZeroSummary out;
  out.stage = stage;
  out.ranks = shards.ranks();
  out.total_floats = shards.total();
  out.shard_floats = stage == 0 ? shards.total() : shards.shard_size();
  out.state = state_on_gpu ? "GPU memory: bf16 working parameters; fp32 master weights, gradients, AdamW m and v"
                           : "host memory: fp32 parameters (the master weights), gradients, AdamW m and v";
  if (plan.strategy.zero.offload) out.offload = "optimizer state and step on the host";
  out.collective_s = collective_s;
  const auto add = [&](const char* collective, const char* of, int calls, std::uint64_t bytes) {
    out.collectives_per_step.push_back({collective, of, calls, bytes});
  };
  // Stages 2-3 run theirs in every micro-batch's forward and backward; the rest once a step.
  const int a = plan::accumulation_steps(plan);
  const std::uint64_t per_step = static_cast<std::uint64_t>(a);
  if (stage < 2) add("all-reduce", "gradients", 1, whole);
  if (stage >= 3) add("all-gather", "parameters before each unit's forward", a * units, per_step * padded_params);
  if (stage >= 3)
    add("all-gather", "parameters before each layer's backward", a * (units - 2), per_step * layers_params);
  if (stage >= 2) add("reduce-scatter", "gradients after each unit's backward", a * units, per_step * padded_grads);
  if (stage >= 1) add("all-reduce", "squared gradient norm (fp64)", 1, 8);
  if (stage == 1 || stage == 2) add("all-gather", "updated parameters", units, padded_params);
  return out;
}

}  // namespace burst::rt
