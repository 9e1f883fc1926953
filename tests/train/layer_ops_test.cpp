// The layer operations: linear against a naive triple loop; every backward against central
// finite differences (in double) of a random linear functional sum(r * y); rotary embedding's
// rotation properties (norms kept, backward undoes forward and is its transpose, scores depend
// on relative positions only); the embedding's gather and scatter, and argument errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "runtime/kernels/random_values.hpp"
#include "runtime/training/detail/layer_ops.hpp"
#include "tests/support/error_text.hpp"

using namespace burst;

namespace {

double functional(const std::vector<float>& r, const std::vector<float>& y) {
  double sum = 0;
  for (std::size_t i = 0; i < y.size(); ++i) sum += static_cast<double>(r[i]) * y[i];
  return sum;
}

// d f / d param by central differences, each entry moved by +-h (the float step actually taken).
std::vector<double> numeric_gradient(std::vector<float>& param, const std::function<double()>& f, float h = 1e-2f) {
  std::vector<double> grad(param.size());
  for (std::size_t i = 0; i < param.size(); ++i) {
    const float saved = param[i];
    param[i] = saved + h;
    const double up = f(), x_up = param[i];
    param[i] = saved - h;
    const double down = f(), x_down = param[i];
    param[i] = saved;
    grad[i] = (up - down) / (x_up - x_down);
  }
  return grad;
}

// analytic - before == numeric, entry by entry (before: what an accumulated gradient started at).
void check_gradient(const std::vector<float>& analytic, const std::vector<double>& numeric,
                    const std::vector<float>& before = {}) {
  REQUIRE(analytic.size() == numeric.size());
  for (std::size_t i = 0; i < analytic.size(); ++i) {
    const double got = analytic[i] - (before.empty() ? 0.0 : before[i]);
    CHECK(got == Approx(numeric[i]).margin(2e-3));
  }
}

double dot(const float* a, const float* b, std::int64_t n) {
  double sum = 0;
  for (std::int64_t i = 0; i < n; ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}

}  // namespace

TEST_CASE("linear forward matches a naive triple loop", "[layer_ops]") {
  std::mt19937 rng(1);
  const std::int64_t rows = 5, in = 7, out = 3;
  const auto x = rt::random_values(rows * in, rng), w = rt::random_values(in * out, rng);
  std::vector<float> y(rows * out, 99.0f);
  rt::linear_forward(x, rows, in, w, out, y);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t o = 0; o < out; ++o) {
      double want = 0;
      for (std::int64_t i = 0; i < in; ++i) want += static_cast<double>(x[r * in + i]) * w[i * out + o];
      CHECK(y[r * out + o] == Approx(want).margin(1e-6));
    }
  }
}

TEST_CASE("linear backward matches finite differences; dW accumulates, dx when asked", "[layer_ops]") {
  std::mt19937 rng(2);
  const std::int64_t rows = 5, in = 8, out = 6;
  auto x = rt::random_values(rows * in, rng), w = rt::random_values(in * out, rng);
  const auto r = rt::random_values(rows * out, rng);
  std::vector<float> y(rows * out);
  const auto loss = [&] {
    rt::linear_forward(x, rows, in, w, out, y);
    return functional(r, y);
  };
  const auto dx_before = rt::random_values(rows * in, rng), dw_before = rt::random_values(in * out, rng);
  auto dx = dx_before, dw = dw_before;
  const bool accumulate = GENERATE(false, true);
  rt::linear_backward(x, rows, in, w, out, r, dx, dw, accumulate);
  check_gradient(dx, numeric_gradient(x, loss), accumulate ? dx_before : std::vector<float>{});
  check_gradient(dw, numeric_gradient(w, loss), dw_before);
}

TEST_CASE("rms_norm backward matches finite differences; dgain accumulates", "[layer_ops]") {
  std::mt19937 rng(3);
  const std::int64_t rows = 5, dim = 8;
  const float eps = 1e-5f;
  auto x = rt::random_values(rows * dim, rng), gain = rt::random_values(dim, rng);
  const auto r = rt::random_values(rows * dim, rng);
  std::vector<float> y(rows * dim), inv_rms(rows);
  const auto loss = [&] {
    rt::rms_norm_forward(x, gain, rows, dim, eps, y, inv_rms);
    return functional(r, y);
  };
  loss();
  for (std::int64_t row = 0; row < rows; ++row) {
    double squares = 0;
    for (std::int64_t j = 0; j < dim; ++j) squares += static_cast<double>(x[row * dim + j]) * x[row * dim + j];
    CHECK(inv_rms[row] == Approx(1.0 / std::sqrt(squares / dim + eps)).epsilon(1e-6));
  }
  std::vector<float> dx(rows * dim, 99.0f);
  const auto dgain_before = rt::random_values(dim, rng);
  auto dgain = dgain_before;
  rt::rms_norm_backward(x, gain, inv_rms, r, rows, dim, dx, dgain);
  check_gradient(dx, numeric_gradient(x, loss));
  check_gradient(dgain, numeric_gradient(gain, loss), dgain_before);
}

TEST_CASE("swiglu backward matches finite differences", "[layer_ops]") {
  std::mt19937 rng(4);
  const std::int64_t n = 40;
  auto u = rt::random_values(n, rng), w = rt::random_values(n, rng);
  for (float& v : u) v *= 4.0f;  // reach the sigmoid's tails
  const auto r = rt::random_values(n, rng);
  std::vector<float> m(n);
  const auto loss = [&] {
    rt::swiglu_forward(u, w, m);
    return functional(r, m);
  };
  loss();
  CHECK(m[0] == Approx(u[0] / (1.0 + std::exp(-static_cast<double>(u[0]))) * w[0]).epsilon(1e-6));
  std::vector<float> du(n, 99.0f), dw(n, 99.0f);
  rt::swiglu_backward(u, w, r, du, dw);
  check_gradient(du, numeric_gradient(u, loss));
  check_gradient(dw, numeric_gradient(w, loss));
}

TEST_CASE("rope turns each pair (i, i + d/2) by position * base^(-2i/d)", "[layer_ops]") {
  rt::Tensor x({1, 1, 4});
  const std::vector<float> start{1.0f, 2.0f, 3.0f, 4.0f};
  std::copy(start.begin(), start.end(), x.values().begin());
  const std::vector<std::int64_t> position{3};
  rt::rope_forward(x.view(), position, 100.0f);
  const double a0 = 3.0, a1 = 3.0 / 10.0;  // 100^(-0/4), 100^(-2/4)
  CHECK(x.values()[0] == Approx(1 * std::cos(a0) - 3 * std::sin(a0)).margin(1e-6));
  CHECK(x.values()[2] == Approx(3 * std::cos(a0) + 1 * std::sin(a0)).margin(1e-6));
  CHECK(x.values()[1] == Approx(2 * std::cos(a1) - 4 * std::sin(a1)).margin(1e-6));
  CHECK(x.values()[3] == Approx(4 * std::cos(a1) + 2 * std::sin(a1)).margin(1e-6));
}

TEST_CASE("rope keeps norms, its backward undoes it and is its transpose", "[layer_ops]") {
  std::mt19937 rng(5);
  const rt::Shape shape{6, 3, 8};
  const std::vector<std::int64_t> positions{17, 0, 4093, 5, 16, 250};  // any order, as layouts permute tokens
  rt::Tensor x(shape), y(shape);
  const auto xs = rt::random_values(shape.elements(), rng), ys = rt::random_values(shape.elements(), rng);
  std::copy(xs.begin(), xs.end(), x.values().begin());
  std::copy(ys.begin(), ys.end(), y.values().begin());

  rt::rope_forward(x.view(), positions, 10000.0f);
  for (std::int64_t t = 0; t < shape.tokens; ++t) {
    for (std::int64_t h = 0; h < shape.heads; ++h) {
      const float* before = xs.data() + (t * shape.heads + h) * shape.head_dim;
      const float* after = x.view().row(t, h);
      CHECK(dot(after, after, shape.head_dim) == Approx(dot(before, before, shape.head_dim)).epsilon(1e-5));
    }
  }
  // <rope(x), y> == <x, rope_backward(y)>
  const double forward_side = dot(x.values().data(), ys.data(), shape.elements());
  rt::rope_backward(y.view(), positions, 10000.0f);
  CHECK(forward_side == Approx(dot(xs.data(), y.values().data(), shape.elements())).epsilon(1e-5));

  rt::rope_backward(x.view(), positions, 10000.0f);
  for (std::int64_t i = 0; i < shape.elements(); ++i) CHECK(x.values()[i] == Approx(xs[i]).margin(1e-5));
}

TEST_CASE("rope scores depend on the relative position only", "[layer_ops]") {
  std::mt19937 rng(6);
  const auto q = rt::random_values(16, rng), k = rt::random_values(16, rng);
  const auto score = [&](std::int64_t p_q, std::int64_t p_k) {
    rt::Tensor tq({1, 1, 16}), tk({1, 1, 16});
    std::copy(q.begin(), q.end(), tq.values().begin());
    std::copy(k.begin(), k.end(), tk.values().begin());
    rt::rope_forward(tq.view(), std::vector<std::int64_t>{p_q}, 10000.0f);
    rt::rope_forward(tk.view(), std::vector<std::int64_t>{p_k}, 10000.0f);
    return dot(tq.values().data(), tk.values().data(), 16);
  };
  CHECK(score(10, 3) == Approx(score(1010, 1003)).margin(1e-5));
  CHECK(score(2, 9) == Approx(score(502, 509)).margin(1e-5));
  CHECK(std::abs(score(10, 3) - score(10, 4)) > 1e-3);
}

TEST_CASE("rope rejects an odd head_dim and a wrong number of positions", "[layer_ops]") {
  rt::Tensor x({2, 1, 5});
  const std::string text = test::error_text([&] { rt::rope_forward(x.view(), std::vector<std::int64_t>{0}, 1e4f); });
  CHECK(text.find("rope_forward: x: head_dim 5 (valid: an even head_dim >= 2") != std::string::npos);
  CHECK(text.find("rope_forward: positions: 1 values (valid: one per token = 2)") != std::string::npos);
}

TEST_CASE("embedding gathers rows and scatters gradients back, summing repeated tokens", "[layer_ops]") {
  const std::int64_t vocab = 4, dim = 3;
  const std::vector<float> table{0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32};
  const std::vector<std::int32_t> tokens{2, 0, 2};
  std::vector<float> out(9);
  rt::embedding_forward(tokens, table, vocab, dim, out);
  CHECK(out == std::vector<float>{20, 21, 22, 0, 1, 2, 20, 21, 22});

  const std::vector<float> dout{1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<float> dtable(12, 1.0f);
  rt::embedding_backward(tokens, dout, vocab, dim, dtable);
  CHECK(dtable == std::vector<float>{5, 6, 7, 1, 1, 1, 9, 11, 13, 1, 1, 1});
}

TEST_CASE("embedding names a token outside the vocabulary", "[layer_ops]") {
  const std::vector<float> table(12);
  const std::vector<std::int32_t> tokens{1, 7, -2};
  std::vector<float> out(9);
  const std::string text = test::error_text([&] { rt::embedding_forward(tokens, table, 4, 3, out); });
  CHECK(text.find("embedding_forward: tokens[1]: token 7 is outside the vocabulary of 4 tokens (2 such tokens in "
                  "all) (valid: 0 <= token < 4") != std::string::npos);
}

TEST_CASE("linear names every span of the wrong size", "[layer_ops]") {
  const std::vector<float> x(10), w(6), dy(4);
  std::vector<float> dx(10), dw(5);
  const std::string text = test::error_text([&] { rt::linear_backward(x, 2, 5, w, 2, dy, dx, dw, false); });
  CHECK(text.find("linear_backward: w: 6 values (valid: in * out = 10)") != std::string::npos);
  CHECK(text.find("linear_backward: dw: 5 values (valid: in * out = 10)") != std::string::npos);
}
