#include "runtime/calibration/layer_speed.hpp"

#include <algorithm>
#include <numeric>
#include <random>

#include "runtime/calibration/together.hpp"
#include "runtime/kernels/random_values.hpp"
#include "runtime/training/step_kernels.hpp"

namespace burst::rt {
namespace {

constexpr float kRopeBase = 10000.0f;

// The tensors of one layer's elementwise kernels at `t` tokens, filled with random values.
struct LayerTensors {
  LayerShape shape;
  std::int64_t tokens;
  std::vector<std::int64_t> positions;
  std::vector<float> x, gain, y, inv_rms, q, k, h, u, w, m, d_m, d_u, d_w, dy, dx, d_gain;

  LayerTensors(const LayerShape& s, std::int64_t t, std::mt19937& rng)
      : shape(s),
        tokens(t),
        positions(static_cast<std::size_t>(t)),
        x(random_values(t * s.hidden, rng)),
        gain(random_values(s.hidden, rng)),
        y(x.size()),
        inv_rms(static_cast<std::size_t>(t)),
        q(random_values(t * s.heads * s.head_dim, rng)),
        k(random_values(t * s.kv_heads * s.head_dim, rng)),
        h(random_values(t * s.hidden, rng)),
        u(random_values(t * s.ffn, rng)),
        w(random_values(t * s.ffn, rng)),
        m(u.size()),
        d_m(random_values(t * s.ffn, rng)),
        d_u(u.size()),
        d_w(u.size()),
        dy(random_values(t * s.hidden, rng)),
        dx(x.size()),
        d_gain(gain.size()) {
    std::iota(positions.begin(), positions.end(), std::int64_t{0});
  }

  // The forward's and the backward's elementwise calls, in the step's order (train_step.cpp).
  void run(StepKernels& kernels) {
    const std::int64_t rows = tokens, dim = shape.hidden;
    kernels.set_positions(positions);
    kernels.rms_norm_forward(host_tensor(x), host_tensor(gain), rows, dim, host_tensor(y), host_tensor(inv_rms));
    kernels.rope(host_tensor(q), shape.heads, host_tensor(k), shape.kv_heads, shape.head_dim, kRopeBase, false);
    kernels.add_rms_norm_forward(host_tensor(h), host_tensor(x), host_tensor(h), host_tensor(gain), rows, dim,
                                 host_tensor(y), host_tensor(inv_rms));
    kernels.swiglu_forward(host_tensor(u), host_tensor(w), host_tensor(m));
    kernels.residual_add(host_tensor(y), host_tensor(h), host_tensor(y));
    kernels.swiglu_backward(host_tensor(u), host_tensor(w), host_tensor(d_m), host_tensor(d_u), host_tensor(d_w));
    kernels.rms_norm_backward(host_tensor(h), host_tensor(gain), host_tensor(inv_rms), host_tensor(dy), rows, dim,
                              host_tensor(dy), host_tensor(dx), host_tensor(d_gain));
    kernels.rope(host_tensor(q), shape.heads, host_tensor(k), shape.kv_heads, shape.head_dim, kRopeBase, true);
    kernels.rms_norm_backward(host_tensor(x), host_tensor(gain), host_tensor(inv_rms), host_tensor(dx), rows, dim,
                              host_tensor(dy), host_tensor(y), host_tensor(d_gain));
  }
};

}  // namespace

std::vector<KernelSpeed> measure_layer_elementwise(Communicator& comm, const LayerElementwiseOptions& o,
                                                   const std::function<double(std::int64_t)>& work_of) {
  HostStepKernels kernels;
  std::mt19937 rng(11);
  std::vector<LayerTensors> layers;
  layers.reserve(o.tokens.size());
  std::vector<int> reps;
  for (const std::int64_t t : o.tokens) {
    layers.emplace_back(o.shape, t, rng);
    layers.back().run(kernels);  // warm: pages touched, code and tables loaded
    reps.push_back(static_cast<int>(std::max<std::int64_t>(1, o.tokens_per_run / t)));
  }
  const std::size_t per_round = layers.size();
  std::vector<double> mine;
  for (int round = 0; round < o.rounds; ++round) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      mine.push_back(time_together(comm, [&] {
        for (int r = 0; r < reps[i]; ++r) layers[i].run(kernels);
      }));
    }
  }
  const std::vector<double> typical = median_of_slowest(comm, mine, per_round);
  std::vector<KernelSpeed> speeds;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    speeds.push_back(
        {"elementwise", "", o.tokens[i], reps[i] * work_of(o.tokens[i]), typical.empty() ? 0 : typical[i]});
  }
  return speeds;
}

}  // namespace burst::rt
