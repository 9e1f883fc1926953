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
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/json_reader.hpp"
#include "simulator/task_graph.hpp"
#include "topologies/topology.hpp"

namespace burst::sim {

inline constexpr int kKernelKinds = 4;  // KernelKind values

struct EfficiencyCurve {
  // (block tokens, efficiency in (0, 1]), tokens strictly increasing; at least one point.
  std::vector<std::pair<double, double>> points;

  // Piecewise linear in log2(tokens), clamped at both ends. tokens <= 0 means "no block size
  // known" and returns the last (large-block) efficiency.
  [[nodiscard]] double at(double tokens) const;
};

struct ComputeCalibration {
  std::string gpu = "*";  // substring of GpuSpec::model, or "*"
  std::array<EfficiencyCurve, kKernelKinds> kernels;  // indexed by KernelKind
};

struct Calibration {
  std::vector<ComputeCalibration> compute;        // one per GPU family; "*" must be present
  std::array<double, topo::kLinkKindCount> link_efficiency{};  // indexed by topo::LinkKind
  std::array<double, topo::kPathClassCount> latency_s{};      // indexed by topo::PathClass

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

// The calibration as a "burst.calibration/1" document (apply_calibration of it onto anything
// with the same patterns rebuilds it).
[[nodiscard]] Json calibration_to_json(const Calibration& calibration);

}  // namespace burst::sim
