// Compute cost of one task on its GPU, as the sum of its kernels, each at least the host's
// launch gap g (a kernel shorter than the time to issue the next leaves the GPU idle):
//   compute kernel   max(g, F / (P x e)), F FLOPs on a GPU of peak P at efficiency e;
//   epilogue         max(g, B / (M x m)), B bytes (the merge or accumulation after a ring
//                    step) through memory of bandwidth M at the elementwise efficiency m;
//   elementwise task max(g, B / (M x m)) with B = the task's amount (bytes, not FLOPs).
// "roofline" takes e from the calibration curve of the kernel (masked blocks have their own
// curves) at the block's smaller side, the dimension that starves the kernel of parallel tiles;
// a task without block sizes uses the large-block end. "peak" is a lower bound: e = m = 1 and
// no launch gap. Tasks with no work take no time.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/error.hpp"
#include "simulator/detail/costs/models.hpp"

namespace burst::sim {
namespace {

// A rate of the GPU the model divides by: refused, naming the field, when not positive.
double rate_of(const topo::GpuSpec& gpu, double rate, const char* what, const char* example) {
  if (!(rate > 0)) {
    throw Error(Problem{"topology", fmt::format("GPU '{}' has no {}", gpu.model, what), "a positive rate",
                        fmt::format("set the GPU's {} (e.g. \"{}\") in the topology", what, example)});
  }
  return rate;
}
double peak_of(const topo::GpuSpec& gpu) { return rate_of(gpu, gpu.peak_bf16_flops, "peak FLOP/s", "312TFLOPS"); }
double memory_bandwidth_of(const topo::GpuSpec& gpu) {
  return rate_of(gpu, gpu.memory_bandwidth_Bps, "memory bandwidth", "2TBps");
}

double block_tokens(const Task& task) {
  if (task.block_q > 0 && task.block_k > 0) return static_cast<double>(std::min(task.block_q, task.block_k));
  return static_cast<double>(std::max(task.block_q, task.block_k));  // one side known, or 0: none
}

// Thread blocks of an attention kernel: one per 128 query rows in the forward, per 128 key
// columns in the backward (FlashAttention-2's tiles for head dim 128), per lane. Other
// kernels, and tasks that do not say their lanes: 0 (unknown).
double thread_blocks(const Task& task) {
  constexpr double kTile = 128;
  if (task.lanes == 0) return 0;
  if (task.kernel == KernelKind::AttentionForward) return task.lanes * std::ceil(task.block_q / kTile);
  if (task.kernel == KernelKind::AttentionBackward) return task.lanes * std::ceil(task.block_k / kTile);
  return 0;
}

class RooflineModel final : public ComputeModel {
 public:
  explicit RooflineModel(Calibration calibration) : calibration_(std::move(calibration)) {}
  [[nodiscard]] std::string name() const override { return "roofline"; }
  [[nodiscard]] double seconds(const Task& task, const topo::GpuSpec& gpu) const override {
    const ComputeCalibration& c = calibration_.compute_for(gpu.model);
    const auto kernel = [&](double s) { return s > 0 ? std::max(s, c.launch_gap_s) : 0.0; };
    const double streaming = memory_bandwidth_of(gpu) * c.kernels[curve_index(KernelKind::Elementwise, false)].at(0);
    if (task.kernel == KernelKind::Elementwise) return kernel(task.amount / streaming);
    const double efficiency = std::min(1.0, c.kernels[curve_index(task.kernel, task.masked)].at(block_tokens(task)) *
                                                c.parallelism(thread_blocks(task), task.masked));
    const double flops_s = task.amount > 0 ? task.amount / (peak_of(gpu) * efficiency) : 0;
    return kernel(flops_s) + kernel(static_cast<double>(task.epilogue_bytes) / streaming);
  }
  [[nodiscard]] double overlap_slowdown(const topo::GpuSpec& gpu) const override {
    const ComputeCalibration& c = calibration_.compute_for(gpu.model);
    return c.multiprocessors > 0 ? c.multiprocessors / (c.multiprocessors - c.comm_ctas) : 1.0;
  }

 private:
  Calibration calibration_;
};

class PeakModel final : public ComputeModel {
 public:
  [[nodiscard]] std::string name() const override { return "peak"; }
  [[nodiscard]] double seconds(const Task& task, const topo::GpuSpec& gpu) const override {
    if (task.kernel == KernelKind::Elementwise) return task.amount / memory_bandwidth_of(gpu);
    return (task.amount > 0 ? task.amount / peak_of(gpu) : 0) +
           static_cast<double>(task.epilogue_bytes) / memory_bandwidth_of(gpu);
  }
};

}  // namespace

std::shared_ptr<const ComputeModel> make_roofline_model(Calibration calibration) {
  return std::make_shared<RooflineModel>(std::move(calibration));
}
std::shared_ptr<const ComputeModel> make_peak_model() { return std::make_shared<PeakModel>(); }

}  // namespace burst::sim
