// Rebuilding published attention runs as simulator jobs (fidelity.hpp).
#include "simulator/fidelity/fidelity.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "simulator/attention/families.hpp"
#include "simulator/costs/calibration.hpp"
#include "simulator/layer_simulation.hpp"
#include "topologies/json_format.hpp"
#include "topologies/presets.hpp"

namespace burst::sim {
namespace {

// The preset node of each GPU the sources name.
const std::map<std::string, std::string, std::less<>>& gpu_presets() {
  static const std::map<std::string, std::string, std::less<>> presets = {
      {"A100", "dgx-a100"}, {"A100-SXM4-80GB", "dgx-a100"}, {"A800", "a800-4hca"},
      {"H800", "h800"},     {"H100", "dgx-h100"},           {"H100-SXM5", "dgx-h100"}};
  return presets;
}

// The methods a figure may name.
bool modelled(const std::string& method) {
  for (const char* m : {"fa2", "ring", "zigzag_ring", "stripe_ring", "burst", "burstengine", "loongtrain-double-ring",
                        "megatron-cp", "internevo-usp"}) {
    if (method == m) return true;
  }
  return false;
}

// The strategy a (modelled) method names, for `shape` on `topology`; ring-flash-attention's and
// BurstAttention's methods take the figure's layout.
AttentionStrategy method_strategy(const PublishedFigure& f, const AttentionShape& shape,
                                  const topo::Topology& topology) {
  AttentionStrategy s;
  s.name = f.method;
  s.ring = RingKind::Flat;
  s.layout = f.layout == "zigzag" ? Layout::Zigzag : f.layout == "striped" ? Layout::Striped : Layout::Contiguous;
  if (f.method == "fa2" || f.method == "ring" || f.method == "zigzag_ring" || f.method == "stripe_ring") {
    s.backward = BackwardMode::KvRing;  // ring-flash-attention: K,V circulate, dK,dV follow in fp32
    s.dkv_bytes = 4;
    s.code = family_traits("ring").code;  // and its code's traits (docs/strategies.md)
    return s;
  }
  if (f.method == "burst") {
    s.backward = BackwardMode::QRing;  // BurstAttention: the query side circulates, dQ follows
    s.dq_bytes = 4;
    return s;
  }
  // BurstEngine's benchmark of the families' kernels: each as its family's preset runs it.
  if (f.method == "burstengine") return strategy_preset("burst", shape, topology);
  if (f.method == "loongtrain-double-ring" || f.method == "megatron-cp")
    return strategy_preset(f.method, shape, topology);
  if (f.method == "internevo-usp") {
    // LoongTrain's USP (one window: a flat ring, dK,dV in fp32 on every hop) with the Ulysses
    // degree that benchmark gives it, each node's GPUs.
    s = strategy_preset("loongtrain-usp", shape, topology);
    s.name = f.method;
    s.ulysses = topology.gpus_per_node();
    return s;
  }
  throw std::logic_error("fidelity: method " + f.method + " is listed as modelled but has no strategy");
}

// FlashAttention's benchmark count: 4 b S^2 H D, halved under a causal mask, x 3.5 for forward +
// backward (the backward 2.5 times the forward), over the GPUs.
double flash_attention_flops_per_gpu(const PublishedFigure& f) {
  const double forward = 4.0 * f.batch * f.seq * f.seq * f.heads * f.head_dim / (f.mask == "causal" ? 2 : 1);
  return forward * (f.phase == "fwd_bwd" ? 3.5 : 1.0) / f.gpus;
}

std::optional<double> seconds_per_iteration(const PublishedFigure& f) {
  if (f.metric == "iter_per_s" && f.value > 0) return 1 / f.value;
  if (f.metric == "ms" && f.value > 0) return f.value / 1e3;
  if (f.metric == "tflops_per_gpu" && f.flop_count == "flash_attention" && f.value > 0) {
    return flash_attention_flops_per_gpu(f) / (f.value * 1e12);
  }
  return std::nullopt;
}

AttentionShape shape_of(const PublishedFigure& f) {
  return AttentionShape{.heads = f.heads,
                        .kv_heads = f.kv_heads > 0 ? f.kv_heads : f.heads,
                        .head_dim = f.head_dim,
                        .seq = static_cast<std::int64_t>(f.seq),
                        .batch = f.batch,
                        .dtype_bytes = 2};
}

// Why a figure cannot be rebuilt ("" if it can).
std::string unusable(const PublishedFigure& f) {
  if (f.kind != "attention_kernel" && f.kind != "distributed_attention") return "not an attention figure";
  if (!seconds_per_iteration(f)) return fmt::format("metric {} is derived from a time listed apart", f.metric);
  if (f.phase != "fwd" && f.phase != "fwd_bwd") return fmt::format("phase '{}' is not stated", f.phase);
  if (!gpu_presets().contains(f.gpu)) return fmt::format("no preset node of {}", f.gpu);
  const int per_node = topo::make_preset(gpu_presets().find(f.gpu)->second).gpu_count();
  if (!(f.gpus == 1 && f.nodes == 1) && f.gpus != f.nodes * per_node) {
    return fmt::format("{} GPUs on {} node(s) of {}: only one GPU or whole nodes", f.gpus, f.nodes, per_node);
  }
  if (f.heads <= 0 || f.head_dim <= 0 || f.seq <= 0 || f.batch <= 0 || (f.mask != "causal" && f.mask != "full")) {
    return "shape or mask not stated";
  }
  if (!modelled(f.method)) return fmt::format("method {} is not modelled", f.method);
  return "";
}

class KernelsOnlyModel final : public ComputeModel {
 public:
  [[nodiscard]] std::string name() const override { return "kernels-only"; }
  [[nodiscard]] double seconds(const Task& task, const topo::GpuSpec& gpu) const override {
    if (task.kernel == KernelKind::Elementwise || task.amount <= 0) return 0;
    const auto& curve = calibration_.compute_for(gpu.model).kernels[curve_index(task.kernel, false)];
    return task.amount / (gpu.peak_bf16_flops * curve.at(static_cast<double>(std::max(task.block_q, task.block_k))));
  }

 private:
  Calibration calibration_ = default_calibration();
};

// The preset's nodes for a ring of their GPUs; one of its GPUs alone for a single-GPU run.
topo::Topology node_of(const PublishedFigure& f) {
  topo::Topology node = topo::make_preset(gpu_presets().find(f.gpu)->second, f.nodes);
  if (f.gpus == node.gpu_count()) return node;
  const Json one = {
      {"schema", "burst.topology/1"},
      {"name", "one " + node.gpu().model},
      {"gpu", {{"model", node.gpu().model}}},
      {"node", {{"devices", Json::array({{{"name", "gpu0"}, {"kind", "gpu"}}})}, {"links", Json::array()}}}};
  return topo::parse_topology_json(one, "single-GPU node");
}

double predict(const PublishedFigure& f, const CostModels& models) {
  const topo::Topology topology = node_of(f);
  const AttentionShape shape = shape_of(f);
  const Mask mask = f.mask == "causal" ? Mask{} : Mask{.kind = MaskKind::Full};
  LayerSimOptions options;
  options.models = models;
  const LayerSimulation sim =
      simulate_attention_layer(shape, mask, method_strategy(f, shape, topology), topology, options);
  if (!sim.not_applicable.empty()) throw Error(Problem{f.id, sim.not_applicable, "", ""});
  return sim.forward.time_s + (f.phase == "fwd_bwd" ? sim.backward.time_s : 0.0);
}

}  // namespace

std::shared_ptr<const ComputeModel> make_kernels_only_model() { return std::make_shared<KernelsOnlyModel>(); }

std::vector<FidelityRow> fidelity_rows(const CostModels& given) {
  const CostModels now = given.compute ? given : make_cost_models();
  const CostModels before{make_kernels_only_model(), now.comm};
  std::vector<FidelityRow> rows;
  for (const PublishedFigure& f : published_figures()) {
    if (f.kind != "attention_kernel" && f.kind != "distributed_attention") continue;
    FidelityRow row;
    row.figure = f;
    row.skipped = unusable(f);
    if (row.skipped.empty()) {
      row.tokens_per_gpu = f.seq / f.gpus;
      row.measured_s = *seconds_per_iteration(f);
      row.predicted_s = predict(f, now);
      row.kernels_only_s = predict(f, before);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace burst::sim
