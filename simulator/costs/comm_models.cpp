// Communication cost: a message first pays a fixed latency, then its bytes flow through every
// link of its route; the engines share each link's capacity among the flows crossing it.
//   "calibrated": capacity = raw bandwidth x efficiency[link kind] (what NCCL actually reaches
//                 on that kind of link), latency = software latency[path class] (NCCL's
//                 per-message cost, fitted from small messages) + the path's wire latency;
//   "ideal":      capacity = raw bandwidth, latency = wire latency only.
#include "simulator/detail/costs/models.hpp"

namespace burst::sim {
namespace {

class CalibratedComm final : public CommModel {
 public:
  explicit CalibratedComm(Calibration calibration) : calibration_(std::move(calibration)) {}
  [[nodiscard]] std::string name() const override { return "calibrated"; }
  [[nodiscard]] double capacity(const topo::DirectedLink& link) const override {
    return link.bandwidth_Bps * calibration_.link_efficiency[static_cast<std::size_t>(link.kind)];
  }
  [[nodiscard]] double latency(const topo::PathInfo& path) const override {
    return calibration_.latency_s[static_cast<std::size_t>(path.cls)] + path.latency_s;
  }

 private:
  Calibration calibration_;
};

class IdealComm final : public CommModel {
 public:
  [[nodiscard]] std::string name() const override { return "ideal"; }
  [[nodiscard]] double capacity(const topo::DirectedLink& link) const override { return link.bandwidth_Bps; }
  [[nodiscard]] double latency(const topo::PathInfo& path) const override { return path.latency_s; }
};

}  // namespace

std::shared_ptr<const CommModel> make_calibrated_comm(Calibration calibration) {
  return std::make_shared<CalibratedComm>(std::move(calibration));
}
std::shared_ptr<const CommModel> make_ideal_comm() { return std::make_shared<IdealComm>(); }

}  // namespace burst::sim
