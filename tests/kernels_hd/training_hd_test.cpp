// The training arithmetic shared by the CPU ops and the CUDA kernels (runtime/training/hd/),
// each function against its formula written out directly in long double, for the float
// instantiation the GPU runs and the double one the CPU runs; the RoPE turn at positions in
// the millions; and the kernels' launch geometry (runtime/cuda/detail/training_launch.hpp), whose
// reduction chunks must cover every row once.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "runtime/cuda/detail/training_launch.hpp"
#include "runtime/training/hd/adamw_element.hpp"
#include "runtime/training/hd/cross_entropy_row.hpp"
#include "runtime/training/hd/rms_norm.hpp"
#include "runtime/training/hd/rope.hpp"
#include "runtime/training/hd/swiglu.hpp"

using namespace burst::rt;
using LD = long double;

namespace {

std::vector<float> normal_values(std::size_t n, unsigned seed, float sd = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, sd);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

template <typename T>
void check_rms_norm_row(const std::vector<float>& x, const std::vector<float>& g, const std::vector<float>& dy,
                        double tolerance) {
  const auto n = static_cast<std::int64_t>(x.size());
  const float eps = 1e-5f;
  T squares = 0, dot = 0;
  LD squares_ld = 0, dot_ld = 0;
  for (std::size_t j = 0; j < x.size(); ++j) {
    squares += hd::square_of<T>(x[j]);
    squares_ld += static_cast<LD>(x[j]) * x[j];
  }
  const float inv = hd::rms_norm_inverse(squares, n, eps);
  const LD inv_ld = 1 / std::sqrt(squares_ld / n + eps);
  CHECK(inv == Approx(static_cast<double>(inv_ld)).epsilon(tolerance));
  for (std::size_t j = 0; j < x.size(); ++j) {
    CHECK(hd::rms_norm_output(x[j], inv, g[j]) == Approx(static_cast<double>(x[j] * inv_ld * g[j])).epsilon(1e-6));
    dot += hd::rms_norm_dot_term<T>(g[j], dy[j], x[j]);
    dot_ld += static_cast<LD>(g[j]) * dy[j] * x[j];
    CHECK(static_cast<double>(hd::rms_norm_dgain_term(dy[j], x[j], static_cast<T>(inv))) ==
          Approx(static_cast<double>(dy[j] * x[j] * static_cast<LD>(inv))).epsilon(1e-6));
  }
  const T through = hd::rms_norm_through_rms(static_cast<T>(inv), dot, n);
  const LD through_ld = static_cast<LD>(inv) * inv * dot_ld / n;
  for (std::size_t j = 0; j < x.size(); ++j) {
    const LD want = static_cast<LD>(inv) * (static_cast<LD>(g[j]) * dy[j] - x[j] * through_ld);
    CHECK(hd::rms_norm_dx(static_cast<T>(inv), through, g[j], dy[j], x[j]) ==
          Approx(static_cast<double>(want)).epsilon(tolerance).margin(tolerance));
  }
}

}  // namespace

TEST_CASE("RMSNorm terms and row formulas match the direct formulas in float and double", "[training_hd]") {
  const std::size_t n = 333;  // not a multiple of any block size
  const auto x = normal_values(n, 1), g = normal_values(n, 2), dy = normal_values(n, 3);
  check_rms_norm_row<float>(x, g, dy, 1e-4);
  check_rms_norm_row<double>(x, g, dy, 1e-6);
}

TEST_CASE("the RoPE turn is the angle position * base^(-2i/d), also at positions in the millions", "[training_hd]") {
  const std::int64_t d = 128;
  for (const std::int64_t i : {0, 1, 17, 63}) {
    const double f = hd::rope_frequency(i, d, 10000.0f);
    CHECK(f == Approx(std::pow(10000.0, -2.0 * static_cast<double>(i) / d)).epsilon(1e-15));
    for (const std::int64_t p : {std::int64_t{0}, std::int64_t{7}, std::int64_t{1'048'575}, std::int64_t{3'999'999}}) {
      const LD angle = static_cast<LD>(p) * static_cast<LD>(f);
      const hd::RopeTurn turn = hd::rope_turn(p, f, false), back = hd::rope_turn(p, f, true);
      CHECK(turn.cos == Approx(static_cast<double>(std::cos(angle))).margin(1e-7));
      CHECK(turn.sin == Approx(static_cast<double>(std::sin(angle))).margin(1e-7));
      CHECK(back.cos == turn.cos);
      CHECK(back.sin == -turn.sin);
      const hd::RopePair x{0.75f, -1.5f};
      const hd::RopePair y = hd::rope_rotate(x, turn);
      CHECK(y.first == Approx(static_cast<double>(0.75L * std::cos(angle) + 1.5L * std::sin(angle))).margin(1e-6));
      CHECK(y.second == Approx(static_cast<double>(-1.5L * std::cos(angle) + 0.75L * std::sin(angle))).margin(1e-6));
      const hd::RopePair z = hd::rope_rotate(y, back);
      CHECK(z.first == Approx(x.first).margin(1e-6));
      CHECK(z.second == Approx(x.second).margin(1e-6));
    }
  }
}

TEST_CASE("SwiGLU's value and gradient match silu(u) w and its derivatives", "[training_hd]") {
  for (const float u : {-30.0f, -3.5f, -0.25f, 0.0f, 0.5f, 2.0f, 12.0f}) {
    for (const float w : {-1.25f, 0.0f, 3.0f}) {
      const LD s = 1 / (1 + std::exp(-static_cast<LD>(u)));
      CHECK(hd::swiglu_value(u, w) == Approx(static_cast<double>(u * s * w)).epsilon(1e-6).margin(1e-30));
      const float dm = 0.625f;
      const hd::SwigluGrad grad = hd::swiglu_grad(u, w, dm);
      CHECK(grad.dw == Approx(static_cast<double>(dm * u * s)).epsilon(1e-6).margin(1e-30));
      CHECK(grad.du == Approx(static_cast<double>(dm * w * s * (1 + u * (1 - s)))).epsilon(1e-6).margin(1e-30));
    }
  }
}

TEST_CASE("the AdamW element update is the decoupled AdamW formula in float and double", "[training_hd]") {
  const double lr = 3e-3, b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1;
  for (const std::int64_t step : {1, 2, 10, 1000}) {
    const auto sd = hd::adamw_scalars<double>(lr, b1, b2, eps, wd, step);
    const auto sf = hd::adamw_scalars<float>(lr, b1, b2, eps, wd, step);
    CHECK(sd.correction1 == Approx(1 - std::pow(b1, static_cast<double>(step))).epsilon(1e-15));
    CHECK(sd.correction2 == Approx(1 - std::pow(b2, static_cast<double>(step))).epsilon(1e-15));
    CHECK(sf.correction2 == Approx(sd.correction2).epsilon(1e-7));
    const hd::AdamWElement old{0.5f, 0.01f, 0.0004f};
    const float g = -0.03f;
    const LD m = b1 * old.m + (1 - b1) * static_cast<LD>(g), v = b2 * old.v + (1 - b2) * static_cast<LD>(g) * g;
    const LD p = old.param - lr * ((m / sd.correction1) / (std::sqrt(v / sd.correction2) + eps) + wd * old.param);
    for (const hd::AdamWElement got : {hd::adamw_element(sd, g, old), hd::adamw_element(sf, g, old)}) {
      CHECK(got.m == Approx(static_cast<double>(m)).epsilon(1e-6));
      CHECK(got.v == Approx(static_cast<double>(v)).epsilon(1e-6));
      CHECK(got.param == Approx(static_cast<double>(p)).epsilon(1e-6));
    }
  }
  CHECK(hd::adamw_clip_factor(4.0, 1.0f) == 0.25f);
  CHECK(hd::adamw_clip_factor(0.5, 1.0f) == 1.0f);
  CHECK(hd::adamw_clip_factor(40.0, 0.0f) == 1.0f);  // clip_norm <= 0: no clipping
}

TEST_CASE("the cross-entropy row gradient is softmax minus one-hot, summing to 0", "[training_hd]") {
  const std::vector<float> logits{2.5f, -1.0f, 0.25f, 7.0f, -3.0f};
  const int target = 2;
  double top = logits[0], sum = 0;
  for (const float l : logits) top = std::max(top, static_cast<double>(l));
  for (const float l : logits) sum += hd::log_sum_exp_term(l, top);
  const double lse = hd::log_sum_exp_of(top, sum);
  LD direct = 0;
  for (const float l : logits) direct += std::exp(static_cast<LD>(l));
  CHECK(lse == Approx(static_cast<double>(std::log(direct))).epsilon(1e-14));
  LD total = 0;
  for (std::size_t v = 0; v < logits.size(); ++v) {
    const bool is_target = static_cast<int>(v) == target;
    const float dl = hd::softmax_minus_onehot(logits[v], lse, is_target, 0.5);
    const LD want = 0.5L * (std::exp(static_cast<LD>(logits[v])) / direct - (is_target ? 1 : 0));
    CHECK(dl == Approx(static_cast<double>(want)).epsilon(1e-6));
    CHECK(hd::softmax_minus_onehot(logits[v], static_cast<float>(lse), is_target, 0.5f) ==
          Approx(static_cast<double>(want)).epsilon(1e-5).margin(1e-7));
    total += dl;
  }
  CHECK(static_cast<double>(total) == Approx(0.0).margin(1e-6));
}

TEST_CASE("the training kernels' reduction chunks cover every row once, sized by the row count", "[training_hd]") {
  using namespace burst::rt::gpu;
  for (const std::int64_t rows : {1, 15, 16, 17, 255, 4096, 4097, 1'000'003}) {
    const RowChunks c = dgain_chunks(rows);
    INFO("rows " << rows);
    CHECK(c.chunks >= 1);
    CHECK(c.chunks <= kMaxChunks);
    CHECK((c.chunks - 1) * c.rows_per_chunk < rows);  // the last chunk is not empty
    CHECK(c.chunks * c.rows_per_chunk >= rows);
  }
  CHECK(dgain_chunks(0).chunks == 0);
  CHECK(norm_blocks(0) == 1);
  CHECK(norm_blocks(1) == 1);
  CHECK(norm_blocks(std::int64_t{1} << 40) == kMaxNormBlocks);
  CHECK(elementwise_blocks(1) == 1);
  CHECK(elementwise_blocks(257) == 2);
  CHECK(elementwise_blocks(std::int64_t{1} << 40) == kMaxElementBlocks);
}
