// The numbers behind the cost models, in one table that a "burst.calibration/1" file can
// override: compute efficiency curves per GPU family and kernel, link efficiency per link kind,
// and a software latency per path class.
//
// An efficiency curve maps a block size (tokens) to the fraction of peak FLOP/s a kernel
// reaches. Small attention blocks run far below peak (launch and tail effects, too few tiles to
// fill the SMs), so the curve rises with the block and flattens; between measured points we
// interpolate linearly in log2(tokens), which is how such curves look when plotted, and clamp at
// both ends. GPU families are matched by substring of GpuSpec::model ("H100" matches
// "H100-SXM5-80GB"); the longest matching pattern wins and "*" matches every GPU.
//
// The defaults and where each number comes from are in docs/cost-models.md.
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/json_reader.hpp"
#include "simulator/cost_model.hpp"
#include "simulator/task_graph.hpp"
#include "topologies/topology.hpp"

namespace burst::sim {

// Curves per GPU family: one per KernelKind, then the two attention kernels on masked blocks
// (blocks with partly allowed tiles: a causal diagonal, striped's shifted triangle, a window's
// edge), which run below the same kernel on a full block of the same size.
inline constexpr int kKernelCurves = 6;
[[nodiscard]] std::size_t curve_index(KernelKind kernel, bool masked);

struct EfficiencyCurve {
  // (block tokens, efficiency in (0, 1]), tokens strictly increasing; at least one point.
  std::vector<std::pair<double, double>> points;

  // Piecewise linear in log2(tokens), clamped at both ends. tokens <= 0 means "no block size
  // known" and returns the last (large-block) efficiency.
  [[nodiscard]] double at(double tokens) const;
};

// Efficiency of the compute kernels is a fraction of peak FLOP/s; of elementwise kernels (the
// merge after each ring step, norms, activations) a fraction of the GPU's memory bandwidth,
// since they move bytes and barely compute. launch_gap_s is the host's time to issue one
// kernel: a kernel shorter than that leaves the GPU idle until the next one arrives.
//
// Parallelism: an attention kernel runs one thread block (CTA) per 128 query rows (forward) or
// key columns (backward) per head and sequence, n per multiprocessor. Full blocks give every
// CTA the same work, so the last wave is what is lost: occupancy n / ceil(n). Masked blocks
// give CTAs unequal work (a causal triangle's rows), and SMs idle while the longest finish:
// occupancy n / (n + tail_ctas_per_sm). The curves were measured at curve_ctas CTAs, so a
// kernel's efficiency is its curve's times occupancy(n) / occupancy(the curve's n), at most 1
// (the curves are the ceiling): a 5-head causal 8K block gets two thirds of a 32-head one's
// (docs/cost-models.md).
struct ComputeCalibration {
  std::string gpu = "*";  // substring of GpuSpec::model, or "*"
  // The attention kernels' implementation the attention curves were measured on ("mma.sync",
  // "wgmma", "cpu"; `burst calibrate` records it); "" for built-in and published curves.
  std::string attention_path;
  // The attention curves measured on other paths, by path and curve name ("attn_fwd", ...):
  // recorded for comparison; predictions use the curves above, the path `auto` runs.
  std::map<std::string, std::map<std::string, EfficiencyCurve>> attention_paths;
  std::array<EfficiencyCurve, kKernelCurves> kernels;  // indexed by curve_index()
  double launch_gap_s = 0;
  int multiprocessors = 108;  // 0: not a GPU (the local CPU ranks): no thread-block or overlap model
  double curve_ctas = 2048;
  double tail_ctas_per_sm = 2;
  // Multiprocessors the communication kernels hold while a GPU's transfers are in flight:
  // compute overlapped with them runs on the rest, multiprocessors / (multiprocessors - this)
  // times slower (compute_models.cpp, the event engine).
  double comm_ctas = 4;

  // Multiplier on the curves for an attention kernel of `ctas` thread blocks (0: unknown, 1).
  [[nodiscard]] double parallelism(double ctas, bool masked) const;
};

struct Calibration {
  std::vector<ComputeCalibration> compute;                     // one per GPU family; "*" must be present
  std::array<double, topo::kLinkKindCount> link_efficiency{};  // indexed by topo::LinkKind
  std::array<double, topo::kPathClassCount> latency_s{};       // indexed by topo::PathClass

  // The table for `gpu_model`: the longest pattern contained in it, else "*".
  [[nodiscard]] const ComputeCalibration& compute_for(std::string_view gpu_model) const;
};

// Built-in defaults (docs/cost-models.md gives every source), plus this machine's own curves
// for the `local` topology's ranks: when a local calibration file is found
// (topologies/local_calibration.hpp, written by `burst calibrate`), its "compute" entry for
// GPU model "cpu-rank" is adopted. Nothing else of that file applies here (its "local"
// section is the topology's), so it never changes a GPU cluster's predictions.
[[nodiscard]] Calibration default_calibration();

// Applies a "burst.calibration/1" document on top of `base`: curves given for a GPU pattern
// replace that pattern's curves kernel by kernel (a new pattern starts from "*"), link
// efficiencies and latencies replace the named entries. A "local" section is allowed and left
// to the local topology (topologies/local_calibration.hpp), so one file serves both. Collects every problem (with JSON
// pointers) and throws one burst::Error.
[[nodiscard]] Calibration apply_calibration(Calibration base, const Json& doc, const std::string& source);
[[nodiscard]] Calibration read_calibration_file(const std::string& path);

// The calibration with the attention curves measured on kernel path `path` (the CUDA kernels'
// implementation: "mma.sync", "wgmma"; runtime/cuda/kernel_path.hpp): every GPU pattern whose
// curves a calibration measured on a named path (attention_path; built-in and published curves
// name none, CPU ranks run none, and both stay as they are) takes the curves kept under `path`
// in attention_paths, and
// keeps its own under its path's name. "" or "auto": unchanged (the curves are of the path
// `auto` runs). Throws burst::Error naming the pattern when it has no curves of `path`.
[[nodiscard]] Calibration with_attention_path(Calibration calibration, std::string_view path);

// The calibration as a "burst.calibration/1" document (apply_calibration of it onto anything
// with the same patterns rebuilds it).
[[nodiscard]] Json calibration_to_json(const Calibration& calibration);

// "roofline" and "calibrated" on this calibration (e.g. a default one edited in code).
[[nodiscard]] CostModels make_cost_models(const Calibration& calibration);

}  // namespace burst::sim
