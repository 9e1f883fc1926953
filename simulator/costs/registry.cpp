// Cost models by name, as SimGrid picks its network model from a string: the planner and the
// CLI pass names through, and a wrong name fails with the list of valid ones.
#include <fmt/format.h>

#include "common/error.hpp"
#include "common/text.hpp"
#include "simulator/detail/costs/models.hpp"

namespace burst::sim {

std::vector<std::string> compute_model_names() { return {"roofline", "peak"}; }
std::vector<std::string> comm_model_names() { return {"calibrated", "ideal"}; }

CostModels make_cost_models(std::string_view compute_name, std::string_view comm_name,
                            const std::string& calibration_file, std::string_view kernel_path) {
  Problems problems;
  const auto computes = compute_model_names();
  const auto comms = comm_model_names();
  if (compute_name != "roofline" && compute_name != "peak") {
    problems.add("--compute-model", fmt::format("unknown compute model '{}'", compute_name), text::join(computes),
                 text::did_you_mean(compute_name, computes));
  }
  if (comm_name != "calibrated" && comm_name != "ideal") {
    problems.add("--comm-model", fmt::format("unknown communication model '{}'", comm_name), text::join(comms),
                 text::did_you_mean(comm_name, comms));
  }
  problems.throw_if_any();
  const Calibration calibration =
      calibration_file.empty() ? default_calibration() : read_calibration_file(calibration_file);
  CostModels models;
  models.compute = compute_name == "roofline" ? make_roofline_model(with_attention_path(calibration, kernel_path))
                                              : make_peak_model();
  models.comm = comm_name == "calibrated" ? make_calibrated_comm(calibration) : make_ideal_comm();
  return models;
}

CostModels make_cost_models(const Calibration& calibration) {
  return {make_roofline_model(calibration), make_calibrated_comm(calibration)};
}

}  // namespace burst::sim
