// Compute cost: a kernel of F FLOPs on a GPU of peak P runs for F / (P x e), with e the
// efficiency the kernel reaches at this block size ("roofline", from the calibration curves),
// or e = 1 ("peak", a lower bound on time). The block size of a task is min(block_q, block_k):
// the smaller side is what starves the kernel of parallel tiles. A task without block sizes
// (e.g. an elementwise pass) uses the large-block end of its curve. Tasks with no FLOPs take
// no time.
#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"
#include "simulator/costs/models.hpp"

namespace burst::sim {
namespace {

double peak_of(const topo::GpuSpec& gpu) {
  if (!(gpu.peak_bf16_flops > 0)) {
    throw Error(Problem{"topology", fmt::format("GPU '{}' has no peak FLOP/s", gpu.model), "a positive rate",
                        "set the GPU's peak (e.g. \"312TFLOPS\") in the topology"});
  }
  return gpu.peak_bf16_flops;
}

double block_tokens(const Task& task) {
  if (task.block_q > 0 && task.block_k > 0) return static_cast<double>(std::min(task.block_q, task.block_k));
  return static_cast<double>(std::max(task.block_q, task.block_k));  // one side known, or 0: none
}

class RooflineModel final : public ComputeModel {
 public:
  explicit RooflineModel(Calibration calibration) : calibration_(std::move(calibration)) {}
  [[nodiscard]] std::string name() const override { return "roofline"; }
  [[nodiscard]] double seconds(const Task& task, const topo::GpuSpec& gpu) const override {
    if (task.amount <= 0) return 0;
    const auto& curve = calibration_.compute_for(gpu.model).kernels[static_cast<std::size_t>(task.kernel)];
    return task.amount / (peak_of(gpu) * curve.at(block_tokens(task)));
  }

 private:
  Calibration calibration_;
};

class PeakModel final : public ComputeModel {
 public:
  [[nodiscard]] std::string name() const override { return "peak"; }
  [[nodiscard]] double seconds(const Task& task, const topo::GpuSpec& gpu) const override {
    return task.amount <= 0 ? 0 : task.amount / peak_of(gpu);
  }
};

}  // namespace

std::shared_ptr<const ComputeModel> make_roofline_model(Calibration calibration) {
  return std::make_shared<RooflineModel>(std::move(calibration));
}
std::shared_ptr<const ComputeModel> make_peak_model() { return std::make_shared<PeakModel>(); }

}  // namespace burst::sim
