// CudaStepKernels (cuda_step_kernels.hpp) against the CPU: every operation of the step on the
// same bf16-rounded inputs as layer_ops.hpp's CPU reference, and the cross-entropy against a
// plain double-precision reference written out here. Inputs go in and results come out through
// the object's own memory() (store rounds to bf16, load widens), as the step moves them.
//
// Tolerance per output: max |gpu - cpu| <= k 2^-8 max |cpu| (2^-8: bf16's relative precision),
// as in training_kernels_gpu_test.cpp: k = 1 or 2 for a bf16 output (the CPU's value rounded
// once, plus the GPU's float sums), k = 0.01 for fp32 outputs, k = 0 for copies and the
// embedding (the CPU's additions in the CPU's order).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "common/bf16.hpp"
#include "common/error.hpp"
#include "runtime/cuda/cuda_step_kernels.hpp"
#include "runtime/kernels/tensor.hpp"
#include "runtime/training/detail/layer_ops.hpp"
#include "tests/support/bf16_tolerance.hpp"
#include "runtime/training/model.hpp"

using namespace burst;
using rt::DType;
using rt::StepTensor;

namespace {

using test::bf16_values;
using test::check_within;

constexpr double kExact = 0, kBf16Out = 1, kBf16Sum = 2, kF32Out = 0.01;

// A tensor of `values` stored as `dtype` in the kernels' memory.
rt::BoundTensor upload(rt::StepKernels& k, std::span<const float> values, DType dtype) {
  rt::BoundTensor b{{nullptr, values.size(), dtype, k.memory().space()},
                    k.memory().allocate(values.size() * rt::dtype_size(dtype))};
  b.tensor.data = b.storage.data();
  k.memory().store(values, dtype, b.tensor.data);
  return b;
}

std::vector<float> download(rt::StepKernels& k, const StepTensor& t) {
  std::vector<float> v(t.count);
  k.memory().load(t.data, t.dtype, v);  // waits for the writers
  return v;
}

std::size_t size_of(std::int64_t a, std::int64_t b = 1) { return static_cast<std::size_t>(a * b); }

}  // namespace

TEST_CASE("bound parameters are the bf16 values; bound gradients start at zero and come back") {
  rt::CudaStepKernels k;
  const std::vector<float> params = bf16_values(1000, 1);
  const rt::BoundTensor bound = k.bind_params(rt::host_tensor(std::span<const float>(params)));
  CHECK(bound.tensor.dtype == DType::BF16);
  CHECK(download(k, bound.tensor) == params);
  std::vector<float> grads(777, 5.0f);
  const rt::BoundTensor g = k.bind_gradients(rt::host_tensor(std::span<float>(grads)));
  k.return_gradients(g, rt::host_tensor(std::span<float>(grads)));
  CHECK(std::all_of(grads.begin(), grads.end(), [](float x) { return x == 0.0f; }));
}

TEST_CASE("a model state in device memory is bound in place: the bf16 working copy and the fp32 gradients") {
  rt::CudaStepKernels k;
  const std::vector<float> params = bf16_values(1000, 1);
  const rt::BoundTensor working = upload(k, params, DType::BF16);
  const rt::BoundTensor bound = k.bind_params(working.tensor);
  CHECK(bound.tensor.data == working.tensor.data);
  CHECK(bound.storage.bytes() == 0);
  const rt::BoundTensor grads = upload(k, std::vector<float>(777, 0.0f), DType::F32);
  const rt::BoundTensor g = k.bind_gradients(grads.tensor);
  CHECK(g.tensor.data == grads.tensor.data);
  k.return_gradients(g, grads.tensor);                                          // nothing to move
  CHECK_THROWS_AS(k.bind_params(upload(k, params, DType::F32).tensor), Error);  // device state is bf16 to the layers
}

TEST_CASE("the optimizer on device state matches the CPU's AdamW on a range across two groups") {
  rt::CudaStepKernels k;
  const std::size_t n = 3000, offset = 500;
  const std::vector<rt::ParamGroup> groups{{0, 2000, true}, {2000, 2000, false}};  // the range straddles both
  const std::vector<float> master = bf16_values(n, 11), grads = bf16_values(n, 12), m = bf16_values(n, 13);
  std::vector<float> v = bf16_values(n, 14);
  for (float& x : v) x = std::abs(x);
  const rt::BoundTensor dm = upload(k, master, DType::F32), dg = upload(k, grads, DType::F32),
                        dmm = upload(k, m, DType::F32), dv = upload(k, v, DType::F32),
                        working = upload(k, std::vector<float>(n, 0.0f), DType::BF16);
  const double norm = std::sqrt(rt::squared_norm(grads));
  CHECK(k.squared_norm(dg.tensor) == Approx(norm * norm).epsilon(1e-12));
  const rt::AdamWConfig config{1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f, 0.5f * static_cast<float>(norm)};  // clipping on
  k.adamw_update({offset, dm.tensor, dg.tensor, dmm.tensor, dv.tensor, working.tensor}, groups, norm, 3, config);
  std::vector<float> want = master, want_grads = grads, want_m = m, want_v = v;
  rt::adamw_update({offset, want, want_grads, want_m, want_v}, groups, norm, 3, config);
  check_within("master weights", download(k, dm.tensor), want, kF32Out);
  check_within("m", download(k, dmm.tensor), want_m, kF32Out);
  check_within("v", download(k, dv.tensor), want_v, kF32Out);
  std::vector<float> rounded = download(k, dm.tensor);
  for (float& x : rounded) x = round_to_bf16(x);
  CHECK(download(k, working.tensor) == rounded);  // the layers' copy, rounded from the new master
  CHECK(download(k, dg.tensor) == grads);         // clipped in registers: the buffer is not scaled
}

TEST_CASE("linear forward and backward match the CPU (bf16 and fp32 outputs, dx accumulated, dW +=)") {
  rt::CudaStepKernels k;
  const std::int64_t rows = 37, in = 72, out = 40;
  const std::vector<float> x = bf16_values(size_of(rows, in), 2), w = bf16_values(size_of(in, out), 3, 0.2f);
  const std::vector<float> dy = bf16_values(size_of(rows, out), 4), dx0 = bf16_values(size_of(rows, in), 5);
  const std::vector<float> dw0 = bf16_values(size_of(in, out), 6, 0.1f);
  const auto d_x = upload(k, x, DType::BF16), d_w = upload(k, w, DType::BF16), d_dy = upload(k, dy, DType::BF16);

  std::vector<float> y(size_of(rows, out));
  rt::linear_forward(x, rows, in, w, out, y);
  for (const DType dtype : {DType::BF16, DType::F32}) {
    const auto d_y = upload(k, std::vector<float>(y.size()), dtype);
    k.linear_forward(d_x.tensor, rows, in, d_w.tensor, out, d_y.tensor);
    check_within(dtype == DType::BF16 ? "y bf16" : "y f32", download(k, d_y.tensor), y,
                 dtype == DType::BF16 ? kBf16Sum : kF32Out);
  }

  for (const bool accumulate : {false, true}) {
    INFO("accumulate_dx " << accumulate);
    std::vector<float> dx = dx0, dw = dw0;
    rt::linear_backward(x, rows, in, w, out, dy, dx, dw, accumulate);
    const auto d_dx = upload(k, dx0, DType::BF16), d_dw = upload(k, dw0, DType::F32);
    k.linear_backward(d_x.tensor, rows, in, d_w.tensor, out, d_dy.tensor, d_dx.tensor, d_dw.tensor, accumulate);
    check_within("dx", download(k, d_dx.tensor), dx, kBf16Sum);
    check_within("dw", download(k, d_dw.tensor), dw, kF32Out);
  }
}

TEST_CASE("RMSNorm, RoPE, SwiGLU, the residual add and copy match the CPU") {
  rt::CudaStepKernels k;
  const std::int64_t rows = 45, dim = 300;
  const std::vector<float> x = bf16_values(size_of(rows, dim), 11), gain = bf16_values(size_of(dim), 12);
  const std::vector<float> dy = bf16_values(x.size(), 13), dgain0 = bf16_values(gain.size(), 14, 0.5f);
  const std::vector<float> skip = bf16_values(x.size(), 15);
  std::vector<float> y(x.size()), inv(size_of(rows)), dx(x.size()), dgain = dgain0;
  rt::rms_norm_forward(x, gain, rows, dim, rt::kNormEps, y, inv);
  rt::rms_norm_backward(x, gain, inv, dy, rows, dim, dx, dgain);
  const auto d_x = upload(k, x, DType::BF16), d_gain = upload(k, gain, DType::BF16), d_dy = upload(k, dy, DType::BF16);
  const auto d_y = upload(k, y, DType::BF16), d_inv = upload(k, inv, DType::F32);
  const auto d_dx = upload(k, dx, DType::BF16), d_dgain = upload(k, dgain0, DType::F32);
  k.rms_norm_forward(d_x.tensor, d_gain.tensor, rows, dim, d_y.tensor, d_inv.tensor);
  k.rms_norm_backward(d_x.tensor, d_gain.tensor, d_inv.tensor, d_dy.tensor, rows, dim, {}, d_dx.tensor, d_dgain.tensor);
  check_within("rms_norm y", download(k, d_y.tensor), y, kBf16Out);
  check_within("rms_norm inv_rms", download(k, d_inv.tensor), inv, kF32Out);
  check_within("rms_norm dx", download(k, d_dx.tensor), dx, kBf16Sum);
  check_within("rms_norm dgain", download(k, d_dgain.tensor), dgain, kF32Out);

  // The fused residual add of the backward: dx + skip, rounded once.
  std::vector<float> dx_skip = dx;
  for (std::size_t i = 0; i < dx_skip.size(); ++i) dx_skip[i] += skip[i];
  const auto d_skip = upload(k, skip, DType::BF16);
  k.rms_norm_backward(d_x.tensor, d_gain.tensor, d_inv.tensor, d_dy.tensor, rows, dim, d_skip.tensor, d_dx.tensor,
                      d_dgain.tensor);
  check_within("rms_norm dx + skip", download(k, d_dx.tensor), dx_skip, kBf16Sum);

  // The fused add and norm writes the bits of residual_add then rms_norm_forward, also in place.
  const auto d_sum = upload(k, x, DType::BF16), d_y2 = upload(k, y, DType::BF16), d_inv2 = upload(k, inv, DType::F32);
  k.residual_add(d_x.tensor, d_skip.tensor, d_sum.tensor);
  k.rms_norm_forward(d_sum.tensor, d_gain.tensor, rows, dim, d_y.tensor, d_inv.tensor);
  const auto d_a = upload(k, x, DType::BF16);
  k.add_rms_norm_forward(d_a.tensor, d_skip.tensor, d_a.tensor, d_gain.tensor, rows, dim, d_y2.tensor, d_inv2.tensor);
  CHECK(download(k, d_a.tensor) == download(k, d_sum.tensor));
  CHECK(download(k, d_y2.tensor) == download(k, d_y.tensor));
  CHECK(download(k, d_inv2.tensor) == download(k, d_inv.tensor));

  // Queries and keys (another head count) turned in one call, at Llama 3's base.
  constexpr float kBase = 500000.0f;
  const rt::Shape shape{rows, 3, 64}, k_shape{rows, 2, 64};
  std::vector<std::int64_t> positions(size_of(rows));
  for (std::size_t t = 0; t < positions.size(); ++t) positions[t] = 1'000'000 + static_cast<std::int64_t>(t * 7919);
  k.set_positions(positions);
  for (const bool backward : {false, true}) {
    INFO((backward ? "rope backward" : "rope forward"));
    const std::vector<float> q_values = bf16_values(size_of(shape.elements()), backward ? 22 : 21);
    const std::vector<float> k_values = bf16_values(size_of(k_shape.elements()), backward ? 24 : 23);
    rt::Tensor cpu_q(shape), cpu_k(k_shape);
    std::copy(q_values.begin(), q_values.end(), cpu_q.values().begin());
    std::copy(k_values.begin(), k_values.end(), cpu_k.values().begin());
    for (rt::Tensor* t : {&cpu_q, &cpu_k})
      (backward ? rt::rope_backward : rt::rope_forward)(t->view(), positions, kBase);
    const auto d_q = upload(k, q_values, DType::BF16), d_k = upload(k, k_values, DType::BF16);
    k.rope(d_q.tensor, shape.heads, d_k.tensor, k_shape.heads, shape.head_dim, kBase, backward);
    check_within("rope q", download(k, d_q.tensor), cpu_q.values(), kBf16Out);
    check_within("rope k", download(k, d_k.tensor), cpu_k.values(), kBf16Out);
  }

  const std::size_t n = 1234;
  const std::vector<float> u = bf16_values(n, 31, 3.0f), v = bf16_values(n, 32), dm = bf16_values(n, 33);
  std::vector<float> m(n), du(n), dv(n);
  rt::swiglu_forward(u, v, m);
  rt::swiglu_backward(u, v, dm, du, dv);
  const auto d_u = upload(k, u, DType::BF16), d_v = upload(k, v, DType::BF16), d_dm = upload(k, dm, DType::BF16);
  const auto d_m = upload(k, m, DType::BF16), d_du = upload(k, du, DType::BF16), d_dv = upload(k, dv, DType::BF16);
  k.swiglu_forward(d_u.tensor, d_v.tensor, d_m.tensor);
  k.swiglu_backward(d_u.tensor, d_v.tensor, d_dm.tensor, d_du.tensor, d_dv.tensor);
  check_within("swiglu m", download(k, d_m.tensor), m, kBf16Out);
  check_within("swiglu du", download(k, d_du.tensor), du, kBf16Out);
  check_within("swiglu dw", download(k, d_dv.tensor), dv, kBf16Out);

  std::vector<float> sum(n);
  for (std::size_t i = 0; i < n; ++i) sum[i] = round_to_bf16(u[i] + v[i]);
  const auto stream = upload(k, u, DType::BF16);
  k.residual_add(stream.tensor, d_v.tensor, stream.tensor);  // in place, as the step does
  check_within("residual", download(k, stream.tensor), sum, kExact);

  const auto copied = upload(k, std::vector<float>(n), DType::BF16);
  k.copy(stream.tensor, copied.tensor);
  CHECK(download(k, copied.tensor) == sum);
}

TEST_CASE("the embedding gathers the CPU's rows and adds its gradients in the CPU's order") {
  rt::CudaStepKernels k;
  const std::int64_t vocab = 53, dim = 300;
  std::mt19937 rng(4);
  std::vector<std::int32_t> tokens(77);
  for (auto& t : tokens) t = static_cast<std::int32_t>(rng() % 20);
  const std::vector<float> table = bf16_values(size_of(vocab, dim), 5);
  std::vector<float> out(tokens.size() * size_of(dim));
  rt::embedding_forward(tokens, table, vocab, dim, out);
  const auto d_table = upload(k, table, DType::BF16), d_out = upload(k, std::vector<float>(out.size()), DType::BF16);
  k.embedding_forward(tokens, d_table.tensor, vocab, dim, d_out.tensor);
  check_within("embedding out", download(k, d_out.tensor), out, kExact);

  const std::vector<float> dout = bf16_values(out.size(), 6), dtable0 = bf16_values(table.size(), 7, 0.1f);
  std::vector<float> dtable = dtable0;
  rt::embedding_backward(tokens, dout, vocab, dim, dtable);
  const auto d_dout = upload(k, dout, DType::BF16), d_dtable = upload(k, dtable0, DType::F32);
  k.embedding_backward(tokens, d_dout.tensor, vocab, dim, d_dtable.tensor);
  check_within("embedding dtable", download(k, d_dtable.tensor), dtable, kExact);
}

namespace {

// log sum exp of a row, in double, the plain way.
double reference_lse(std::span<const float> row) {
  const double top = *std::max_element(row.begin(), row.end());
  double sum = 0;
  for (const float l : row) sum += std::exp(l - top);
  return top + std::log(sum);
}

}  // namespace

TEST_CASE("the cross-entropy's loss and gradient match a double-precision reference") {
  rt::CudaStepKernels k;
  const std::int64_t rows = 29, vocab = 1000;  // vocab: several 256-thread strides and a tail
  const std::vector<float> logits = bf16_values(size_of(rows, vocab), 61, 3.0f);
  std::vector<std::int32_t> targets(size_of(rows));
  std::mt19937 rng(62);
  for (auto& t : targets) t = static_cast<std::int32_t>(rng() % vocab);
  targets[3] = targets[17] = -1;  // not counted

  double loss_sum = 0;
  std::int64_t counted = 0;
  const double scale = 1.0 / 27;
  std::vector<float> dl(logits.size(), 0.0f);
  for (std::int64_t r = 0; r < rows; ++r) {
    if (targets[r] == -1) continue;
    const std::span<const float> row(logits.data() + r * vocab, size_of(vocab));
    const double lse = reference_lse(row);
    loss_sum += lse - row[targets[r]];
    ++counted;
    for (std::int64_t v = 0; v < vocab; ++v) {
      dl[size_of(r, vocab) + v] = static_cast<float>(scale * (std::exp(row[v] - lse) - (v == targets[r] ? 1 : 0)));
    }
  }

  const auto d_logits = upload(k, logits, DType::F32);
  const rt::LmHeadForward got = k.cross_entropy_loss(d_logits.tensor, rows, vocab, targets);
  CHECK(got.counted == counted);
  CHECK(got.loss_sum == Approx(loss_sum).epsilon(1e-6));

  const auto d_dl = upload(k, std::vector<float>(dl.size(), 7.0f), DType::BF16);
  k.cross_entropy_backward(d_logits.tensor, rows, vocab, targets, scale, d_dl.tensor);
  check_within("dl bf16", download(k, d_dl.tensor), dl, kBf16Out);

  CHECK_THROWS_WITH(k.cross_entropy_backward(d_logits.tensor, rows, vocab, targets, scale, d_logits.tensor),
                    Catch::Contains("CudaStepKernels::cross_entropy_backward: dl"));  // never over the logits
}

TEST_CASE("a tensor of the wrong dtype is refused, naming the call and the argument") {
  rt::CudaStepKernels k;
  const auto x = upload(k, std::vector<float>(8), DType::F32), w = upload(k, std::vector<float>(8), DType::BF16);
  const auto y = upload(k, std::vector<float>(4), DType::BF16);
  CHECK_THROWS_WITH(k.linear_forward(x.tensor, 2, 4, w.tensor, 2, y.tensor),
                    Catch::Contains("CudaStepKernels::linear_forward: x") && Catch::Contains("bf16"));
  const std::vector<std::int32_t> targets{0, 5};
  CHECK_THROWS_WITH(k.cross_entropy_loss(x.tensor, 2, 4, targets), Catch::Contains("target"));
}
