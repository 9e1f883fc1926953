// Cost models, behind a small interface and chosen by name (as SimGrid's network models are).
//
// Compute: seconds = FLOPs / (peak x efficiency), where efficiency depends on the kernel and
// on the block size (small attention blocks run far below peak); the table comes from a
// calibration (defaults from published FlashAttention-2 figures).
// Communication: a transfer pays a per-message latency for its path class, then moves its
// bytes through links whose usable capacity is the raw bandwidth x an efficiency per link
// kind (NCCL reaches ~195 of 300 GB/s on A100 NVLink; IB runs close to line rate).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/task_graph.hpp"
#include "topologies/topology.hpp"

namespace burst::sim {

class ComputeModel {
 public:
  virtual ~ComputeModel() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  // Seconds a compute task takes alone on its GPU.
  [[nodiscard]] virtual double seconds(const Task& compute, const topo::GpuSpec& gpu) const = 0;
  // How much longer a compute task takes while the GPU's own transfers are in flight (>= 1):
  // communication kernels hold multiprocessors that the compute kernel then lacks.
  [[nodiscard]] virtual double overlap_slowdown(const topo::GpuSpec& /*gpu*/) const { return 1; }
};

class CommModel {
 public:
  virtual ~CommModel() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  // Usable bytes per second of one direction of a link.
  [[nodiscard]] virtual double capacity(const topo::DirectedLink& link) const = 0;
  // Fixed cost of one message on a path, before any byte flows.
  [[nodiscard]] virtual double latency(const topo::PathInfo& path) const = 0;
};

struct CostModels {
  std::shared_ptr<const ComputeModel> compute;
  std::shared_ptr<const CommModel> comm;
};

}  // namespace burst::sim

namespace burst::sim {

// Built-in models by name:
//   compute "roofline": FLOPs / (peak x efficiency(kernel, block size)) from a calibration
//           table (defaults: published FlashAttention-2 and cuBLAS figures, see docs/);
//   compute "peak":     FLOPs / peak (an upper bound on speed);
//   comm    "calibrated": link efficiency per kind and latency per path class from a table
//           (defaults fitted to the nccl-tests figures in docs/);
//   comm    "ideal":    raw link bandwidth, link latencies only.
// `calibration_file` (optional, "burst.calibration/1" JSON) overrides the default tables;
// `kernel_path` prices the attention kernels with the curves it measured on that CUDA kernel path
// (with_attention_path in costs/calibration.hpp; "" or "auto": the path `auto` runs).
[[nodiscard]] CostModels make_cost_models(std::string_view compute_name = "roofline",
                                          std::string_view comm_name = "calibrated",
                                          const std::string& calibration_file = "", std::string_view kernel_path = "");
[[nodiscard]] std::vector<std::string> compute_model_names();
[[nodiscard]] std::vector<std::string> comm_model_names();

}  // namespace burst::sim
