// Rebuilding published training layouts as iteration simulations (layout_fidelity.hpp).
#include "simulator/fidelity/layout_fidelity.hpp"

#include <map>

#include <fmt/format.h>

#include "common/error.hpp"
#include "simulator/attention/ring.hpp"
#include "simulator/fidelity/source_flop_count.hpp"
#include "simulator/models/model.hpp"
#include "simulator/training/training.hpp"
#include "topologies/load.hpp"

namespace burst::sim {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

const std::map<std::string, std::string, std::less<>>& node_presets() {
  static const std::map<std::string, std::string, std::less<>> presets = {{"H100", "dgx-h100"}, {"A800", "a800-4hca"}};
  return presets;
}

// "megatron-cp: TP 4 x ring 8 x DP 8, full, ZeRO-1", and the gradients' dtype where the source's
// framework sets it ("..., bf16 gradients").
std::string describe(const TrainingStrategy& s, int ring, const std::string& gradients) {
  std::string text = s.attention.name + ":";
  if (s.tp > 1) text += fmt::format(" TP {} x", s.tp);
  if (s.attention.ulysses > 1) text += fmt::format(" U {} x", s.attention.ulysses);
  text += fmt::format(" ring {}", ring);
  if (s.dp > 1) text += fmt::format(" x DP {}", s.dp);
  if (ring > 1) text += fmt::format(", {}", to_string(s.attention.layout));
  text += fmt::format(", {}, ZeRO-{}", to_string(s.checkpoint.policy), s.zero.stage);
  return gradients.empty() ? text : text + ", " + gradients + " gradients";
}

LayoutFidelityRow rebuild(const PublishedLayout& l, const CostModels& models) {
  LayoutFidelityRow row;
  row.layout = l;
  const auto preset = node_presets().find(l.gpu);
  if (preset == node_presets().end()) {
    row.skipped = fmt::format("no preset node of {}", l.gpu);
    return row;
  }
  if (l.pp > 1) {
    row.skipped = fmt::format("pipeline parallelism ({}) is not modelled", l.pp);
    return row;
  }
  topo::LoadOptions load;
  load.nodes = l.gpus / 8;
  if (l.gpus % 8 != 0) {
    row.skipped = fmt::format("{} GPUs are part of a node (the presets are whole 8-GPU nodes)", l.gpus);
    return row;
  }
  const topo::Topology topology = topo::load_topology(preset->second, load);
  TrainingJob job;
  job.model = model_preset(l.model);
  job.seq = static_cast<std::int64_t>(l.seq);
  job.batch = l.global_batch;
  job.mask = Mask{};  // causal
  job.linears = parse_linears(l.precision, "precision");
  job.fp8_library = l.fp8_library;
  TrainingStrategy s = training_preset(l.family, job, topology, l.tp, l.dp);
  s.micro_batch = l.micro_batch;
  if (!l.checkpoint.empty()) s.checkpoint.policy = parse_checkpoint_policy(l.checkpoint, "checkpoint");
  if (l.layout) s.attention.layout = *l.layout;
  // A source whose framework keeps gradients otherwise than its family's code (NeMo 1.x's Apex
  // optimizer syncs and keeps them in bf16 where Megatron-LM keeps fp32 main gradients).
  if (!l.gradients.empty()) s.memory.fp32_main_grads = l.gradients == "fp32";
  const int ring = replica_world(topology, l.tp, l.dp).size() / std::max(1, s.attention.ulysses);
  row.strategy = describe(s, ring, l.gradients);
  if (ring * s.attention.ulysses != l.cp) {
    row.skipped = fmt::format("{}'s preset makes context parallelism {} x {}, the source ran {}", l.family, ring,
                              s.attention.ulysses, l.cp);
    return row;
  }
  LayerSimOptions options;
  options.models = models;
  const IterationSimulation it = simulate_iteration(job, s, topology, options);
  if (!it.not_applicable.empty()) {
    row.skipped = "not applicable: " + it.not_applicable;
    return row;
  }
  // A TFLOP/s figure is the source's FLOP count over its step: the same count over the predicted
  // step (source_flop_count.hpp). Without one, the simulation's own model FLOPs.
  row.predicted_tflops_per_gpu =
      l.flop_count ? source_flops_per_token(*l.flop_count, job.model, l.seq) * it.tokens_per_s_per_gpu / 1e12
                   : it.model_flops / it.step_time_s / topology.gpu_count() / 1e12;
  row.predicted_tokens_per_s_per_gpu = it.tokens_per_s_per_gpu;
  row.predicted_memory_gib = it.memory.total() / kGiB;
  return row;
}

}  // namespace

double LayoutFidelityRow::predicted() const {
  return layout.metric == "tokens_per_s_per_gpu" ? predicted_tokens_per_s_per_gpu : predicted_tflops_per_gpu;
}

std::vector<LayoutFidelityRow> layout_fidelity_rows(const CostModels& models) {
  const CostModels m = models.compute ? models : make_cost_models();
  std::vector<LayoutFidelityRow> rows;
  for (const PublishedLayout& l : published_layouts()) rows.push_back(rebuild(l, m));
  return rows;
}

}  // namespace burst::sim
