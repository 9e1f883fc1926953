// The training kernels (training_kernels.hpp) against the CPU layer ops (layer_ops.hpp,
// adamw.hpp) on the same bf16-rounded inputs: embedding, RMSNorm, RoPE, SwiGLU, the residual
// add, the squared gradient norm and AdamW, with sizes that are not multiples of the 256-thread
// blocks, several reduction chunks, and RoPE positions in the millions.
//
// Tolerance per output: max |gpu - cpu| <= k 2^-8 max |cpu| (2^-8: bf16's relative precision),
// k below. A bf16 output is the CPU's value rounded once (half an ulp, 2^-9 relative) plus the
// GPU's float sums where the CPU's are double, hence k = 1 or 2; fp32 outputs are far closer.
// The embedding's gradient is added in the CPU's order and the residual add is one float add:
// both must equal the CPU's bits (k = 0). Deterministic kernels must repeat bit for bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "common/bf16.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/detail/device_buffer.hpp"
#include "runtime/cuda/detail/token_groups.hpp"
#include "runtime/cuda/detail/training_kernels.hpp"
#include "runtime/kernels/tensor.hpp"
#include "runtime/training/adamw.hpp"
#include "runtime/training/detail/layer_ops.hpp"
#include "tests/support/bf16_tolerance.hpp"

using namespace burst;

namespace {

using test::bf16_values;
using test::check_within;

// k of the tolerance, per output.
constexpr double kEmbedding = 0, kResidual = 0, kRmsY = 1, kInvRms = 0.01, kRmsDx = 2, kDgain = 0.01, kRope = 1,
                 kSwiglu = 1, kAdamWMaster = 0.01, kAdamWWorking = 1;
constexpr double kNormRelative = 1e-12;  // the squared norm: double sums in another order

std::vector<Bf16> as_bf16(std::span<const float> v) {
  std::vector<Bf16> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](float x) { return to_bf16(x); });
  return out;
}

std::vector<float> as_float(std::span<const Bf16> v) {
  std::vector<float> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](Bf16 x) { return to_float(x); });
  return out;
}

using rt::gpu::check_cuda;

// A device copy of a host array.
template <typename T>
class Device {
 public:
  explicit Device(const std::vector<T>& host)
      : buffer_("test"), data_(buffer_.reserve_for<T>(std::max<std::size_t>(host.size(), 1))), size_(host.size()) {
    check_cuda(cudaMemcpy(data_, host.data(), size_ * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy (upload)");
  }
  [[nodiscard]] T* get() const { return data_; }
  [[nodiscard]] std::vector<T> download() const {
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    std::vector<T> host(size_);
    check_cuda(cudaMemcpy(host.data(), data_, size_ * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy (download)");
    return host;
  }

 private:
  rt::gpu::DeviceBuffer buffer_;
  T* data_;
  std::size_t size_;
};

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("embedding forward gathers the CPU's rows; backward adds in the CPU's order, bit for bit") {
  const std::int64_t vocab = 53, dim = 300;  // dim: one full 256-thread stride and a tail
  std::mt19937 rng(4);
  std::vector<std::int32_t> tokens(77);
  for (auto& t : tokens) t = static_cast<std::int32_t>(rng() % 20);  // many repeats, ids 20.. unused
  const auto count = static_cast<std::int64_t>(tokens.size());
  const std::vector<float> table = bf16_values(static_cast<std::size_t>(vocab * dim), 5);
  std::vector<float> want(static_cast<std::size_t>(count * dim));
  rt::embedding_forward(tokens, table, vocab, dim, want);

  const Device<std::int32_t> d_tokens(tokens);
  const Device<Bf16> d_table(as_bf16(table));
  Device<Bf16> d_out(std::vector<Bf16>(want.size()));
  rt::gpu::embedding_forward(d_tokens.get(), count, d_table.get(), vocab, dim, d_out.get(), nullptr);
  check_within("embedding out", as_float(d_out.download()), want, kEmbedding);

  const std::vector<float> dout = bf16_values(want.size(), 6);
  const std::vector<float> dtable0 = bf16_values(table.size(), 7, 0.1f);
  std::vector<float> dtable = dtable0;
  rt::embedding_backward(tokens, dout, vocab, dim, dtable);

  const rt::gpu::TokenGroups groups = rt::gpu::group_tokens(tokens, vocab);
  const Device<std::int32_t> rows(groups.rows), offsets(groups.offsets), index(groups.token_index);
  const rt::gpu::DeviceTokenGroups d_groups{static_cast<std::int64_t>(groups.rows.size()), count, rows.get(),
                                            offsets.get(), index.get()};
  const Device<Bf16> d_dout(as_bf16(dout));
  std::vector<std::vector<float>> runs;
  for (int run = 0; run < 2; ++run) {
    Device<float> d_dtable(dtable0);
    rt::gpu::embedding_backward(d_groups, d_dout.get(), vocab, dim, d_dtable.get(), nullptr);
    runs.push_back(d_dtable.download());
  }
  CHECK(same_bits(runs[0], dtable));
  CHECK(same_bits(runs[0], runs[1]));
}

TEST_CASE("RMSNorm forward and backward match the CPU; dgain repeats bit for bit") {
  const std::int64_t rows = 300, dim = 1000;  // 19 dgain chunks; dim not a multiple of 256
  const float eps = 1e-5f;
  const std::vector<float> x = bf16_values(static_cast<std::size_t>(rows * dim), 11);
  const std::vector<float> gain = bf16_values(static_cast<std::size_t>(dim), 12);
  const std::vector<float> dy = bf16_values(x.size(), 13);
  const std::vector<float> dgain0 = bf16_values(gain.size(), 14, 0.5f);
  std::vector<float> y(x.size()), inv(static_cast<std::size_t>(rows)), dx(x.size()), dgain = dgain0;
  rt::rms_norm_forward(x, gain, rows, dim, eps, y, inv);
  rt::rms_norm_backward(x, gain, inv, dy, rows, dim, dx, dgain);

  const Device<Bf16> d_x(as_bf16(x)), d_gain(as_bf16(gain)), d_dy(as_bf16(dy));
  Device<Bf16> d_y(std::vector<Bf16>(x.size()));
  Device<float> d_inv(std::vector<float>(inv.size()));
  rt::gpu::rms_norm_forward(d_x.get(), d_gain.get(), rows, dim, eps, d_y.get(), d_inv.get(), nullptr);
  check_within("rms_norm y", as_float(d_y.download()), y, kRmsY);
  check_within("rms_norm inv_rms", d_inv.download(), inv, kInvRms);

  // The backward from the CPU's inv_rms, so that dx and dgain compare the backward alone.
  const Device<float> d_cpu_inv(inv);
  Device<float> workspace(std::vector<float>(static_cast<std::size_t>(rt::gpu::rms_norm_workspace_floats(rows, dim))));
  std::vector<std::vector<float>> dgains, dxs;
  for (int run = 0; run < 2; ++run) {
    Device<Bf16> d_dx(std::vector<Bf16>(x.size()));
    Device<float> d_dgain(dgain0);
    rt::gpu::rms_norm_backward(d_x.get(), d_gain.get(), d_cpu_inv.get(), d_dy.get(), nullptr, rows, dim, d_dx.get(),
                               d_dgain.get(), workspace.get(), nullptr);
    dxs.push_back(as_float(d_dx.download()));
    dgains.push_back(d_dgain.download());
  }
  check_within("rms_norm dx", dxs[0], dx, kRmsDx);
  check_within("rms_norm dgain", dgains[0], dgain, kDgain);
  CHECK(same_bits(dxs[0], dxs[1]));
  CHECK(same_bits(dgains[0], dgains[1]));
}

TEST_CASE("RoPE forward and backward match the CPU at positions in the millions") {
  const rt::Shape shape{45, 3, 128};
  std::vector<std::int64_t> positions(static_cast<std::size_t>(shape.tokens));
  for (std::size_t t = 0; t < positions.size(); ++t)
    positions[t] = 1'000'000 + static_cast<std::int64_t>(t * 7919) % 2'000'000;
  const Device<std::int64_t> d_positions(positions);
  for (const bool backward : {false, true}) {
    INFO((backward ? "rope_backward" : "rope_forward"));
    rt::Tensor x(shape);
    const std::vector<float> values = bf16_values(static_cast<std::size_t>(shape.elements()), backward ? 22 : 21);
    std::copy(values.begin(), values.end(), x.values().begin());
    (backward ? rt::rope_backward : rt::rope_forward)(x.view(), positions, 500000.0f);

    Device<Bf16> d_x(as_bf16(values));
    const rt::gpu::RopeArgs args{d_x.get(), shape.tokens, shape.heads, shape.head_dim, d_positions.get(), 500000.0f};
    (backward ? rt::gpu::rope_backward : rt::gpu::rope_forward)(args, nullptr);
    check_within("rope x", as_float(d_x.download()), x.values(), kRope);
  }
}

TEST_CASE("SwiGLU forward and backward and the residual add match the CPU") {
  const std::size_t n = 1234;
  const std::vector<float> u = bf16_values(n, 31, 3.0f), w = bf16_values(n, 32), dm = bf16_values(n, 33);
  std::vector<float> m(n), du(n), dw(n);
  rt::swiglu_forward(u, w, m);
  rt::swiglu_backward(u, w, dm, du, dw);

  const Device<Bf16> d_u(as_bf16(u)), d_w(as_bf16(w)), d_dm(as_bf16(dm));
  Device<Bf16> d_m{std::vector<Bf16>(n)}, d_du{std::vector<Bf16>(n)}, d_dw{std::vector<Bf16>(n)};
  const auto count = static_cast<std::int64_t>(n);
  rt::gpu::swiglu_forward(d_u.get(), d_w.get(), d_m.get(), count, nullptr);
  rt::gpu::swiglu_backward(d_u.get(), d_w.get(), d_dm.get(), d_du.get(), d_dw.get(), count, nullptr);
  check_within("swiglu m", as_float(d_m.download()), m, kSwiglu);
  check_within("swiglu du", as_float(d_du.download()), du, kSwiglu);
  check_within("swiglu dw", as_float(d_dw.download()), dw, kSwiglu);

  std::vector<float> sum(n);
  for (std::size_t i = 0; i < n; ++i) sum[i] = round_to_bf16(u[i] + w[i]);
  Device<Bf16> d_stream(as_bf16(u));
  rt::gpu::residual_add(d_stream.get(), d_w.get(), d_stream.get(), count, nullptr);  // in place, as the step does
  check_within("residual", as_float(d_stream.download()), sum, kResidual);
}

TEST_CASE("the squared gradient norm matches the CPU's and repeats bit for bit") {
  const std::vector<float> grads = bf16_values(1'000'003, 41, 0.01f);
  const double want = rt::squared_norm(grads);
  const auto count = static_cast<std::int64_t>(grads.size());
  const Device<float> d_grads(grads);
  Device<double> workspace(
      std::vector<double>(static_cast<std::size_t>(rt::gpu::squared_norm_workspace_doubles(count))));
  std::vector<double> got;
  for (int run = 0; run < 2; ++run) {
    Device<double> result(std::vector<double>(1));
    rt::gpu::squared_norm(d_grads.get(), count, workspace.get(), result.get(), nullptr);
    got.push_back(result.download()[0]);
  }
  CHECK(got[0] == Approx(want).epsilon(kNormRelative));
  CHECK(std::memcmp(&got[0], &got[1], sizeof(double)) == 0);
}

TEST_CASE("AdamW on fp32 master weights matches the CPU step and writes the bf16 working copy") {
  const std::size_t n = 5000;
  const std::vector<float> params0 = bf16_values(n, 51), grads = bf16_values(n, 52, 0.05f);
  const std::vector<float> m0 = bf16_values(n, 53, 0.01f);
  std::vector<float> v0 = bf16_values(n, 54, 0.001f);
  for (float& v : v0) v = v * v;  // second moments are >= 0
  rt::AdamWConfig config;
  const double norm = 2.5;  // above clip_norm = 1: the clip factor 0.4 applies
  const std::int64_t step = 3;
  const std::vector<rt::ParamGroup> groups{{0, n, true}};

  std::vector<float> params = params0, cpu_grads = grads, m = m0, v = v0;
  rt::adamw_update({0, params, cpu_grads, m, v}, groups, norm, step, config);

  Device<float> d_params(params0), d_m(m0), d_v(v0);
  const Device<float> d_grads(grads);
  Device<Bf16> d_working{std::vector<Bf16>(n)};
  const auto scalars =
      rt::hd::adamw_scalars<float>(config.lr, config.beta1, config.beta2, config.eps, config.weight_decay, step);
  rt::gpu::adamw_update(
      {d_params.get(), d_grads.get(), d_m.get(), d_v.get(), d_working.get(), static_cast<std::int64_t>(n)}, scalars,
      rt::hd::adamw_clip_factor(norm, config.clip_norm), nullptr);
  check_within("adamw params", d_params.download(), params, kAdamWMaster);
  check_within("adamw m", d_m.download(), m, kAdamWMaster);
  check_within("adamw v", d_v.download(), v, kAdamWMaster);
  check_within("adamw working copy", as_float(d_working.download()), params, kAdamWWorking);
  CHECK(d_grads.download() == grads);  // the gradients are read, not scaled in place
}
