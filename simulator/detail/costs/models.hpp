// The built-in cost models (internal to simulator/costs; users go through make_cost_models).
#pragma once

#include <memory>

#include "simulator/cost_model.hpp"
#include "simulator/costs/calibration.hpp"

namespace burst::sim {

[[nodiscard]] std::shared_ptr<const ComputeModel> make_roofline_model(Calibration calibration);
[[nodiscard]] std::shared_ptr<const ComputeModel> make_peak_model();
[[nodiscard]] std::shared_ptr<const CommModel> make_calibrated_comm(Calibration calibration);
[[nodiscard]] std::shared_ptr<const CommModel> make_ideal_comm();

}  // namespace burst::sim
