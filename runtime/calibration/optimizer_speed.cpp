#include "runtime/calibration/optimizer_speed.hpp"

#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "runtime/calibration/together.hpp"
#include "runtime/kernels/random_values.hpp"
#include "runtime/training/step_kernels.hpp"

namespace burst::rt {

double measure_optimizer_speed(Communicator& comm, const OptimizerSpeedOptions& o) {
  HostStepKernels kernels;
  std::mt19937 rng(13);
  std::vector<float> master = random_values(o.params, rng), grads = random_values(o.params, rng);
  std::vector<float> m(master.size()), v(master.size());
  const std::array<ParamGroup, 1> groups{ParamGroup{0, master.size(), true}};
  std::int64_t step = 0;
  const auto update = [&] {
    const double norm = std::sqrt(kernels.squared_norm(host_tensor(grads)));
    kernels.adamw_update({0, host_tensor(master), host_tensor(grads), host_tensor(m), host_tensor(v), {}}, groups, norm,
                         ++step, AdamWConfig{});
  };
  update();  // warm: pages touched
  std::vector<double> mine;
  for (int round = 0; round < o.rounds; ++round) mine.push_back(time_together(comm, update));
  const std::vector<double> typical = median_of_slowest(comm, mine, 1);
  return typical.empty() ? 0 : static_cast<double>(o.params) / typical.front();
}

}  // namespace burst::rt
