// The shared online-softmax step (hd/online_softmax.hpp) run over a row's key tiles gives the
// direct softmax: the same lse and the same weighted sum of values, for rows whose first tiles
// are entirely masked, rows with masked holes, and rows with no allowed key at all (which must
// end as O = 0, lse = -inf, with every p exactly 0 and no NaN on the way).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "runtime/kernels/hd/online_softmax.hpp"

using namespace burst;
using rt::hd::kNegInf;

namespace {

float exp_f(float x) { return std::exp(x); }

struct Result {
  double out = 0;  // sum p v / sum p
  double lse = 0;
};

// The direct definition, in double.
Result direct(const std::vector<float>& s, const std::vector<float>& v) {
  double mx = -INFINITY;
  for (const float x : s) mx = std::max(mx, static_cast<double>(x));
  if (mx == -INFINITY) return {0, -INFINITY};
  double sum = 0, acc = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double p = std::exp(static_cast<double>(s[i]) - mx);
    sum += p;
    acc += p * v[i];
  }
  return {acc / sum, mx + std::log(sum)};
}

// The online form, tile by tile, with the shared step.
Result online(const std::vector<float>& s, const std::vector<float>& v, std::size_t tile) {
  float m = kNegInf, l = 0, acc = 0;
  for (std::size_t first = 0; first < s.size(); first += tile) {
    const std::size_t last = std::min(s.size(), first + tile);
    float tile_max = kNegInf;
    for (std::size_t i = first; i < last; ++i) tile_max = std::max(tile_max, s[i]);
    const rt::hd::SoftmaxStep step = rt::hd::online_softmax_step(m, tile_max, exp_f);
    float sum = 0, pv = 0;
    for (std::size_t i = first; i < last; ++i) {
      const float p = rt::hd::tile_probability(s[i], step, exp_f);
      REQUIRE(std::isfinite(p));
      sum += p;
      pv += p * v[i];
    }
    if (step.row_is_empty()) {
      CHECK(sum == 0.0f);
      continue;
    }
    l = step.alpha * l + sum;
    acc = step.alpha * acc + pv;
    m = step.max;
  }
  const rt::hd::RowEnd end = rt::hd::finish_row(m, l);
  return {acc * end.inv_sum, end.lse};
}

}  // namespace

TEST_CASE("the online softmax step over tiles equals the direct softmax") {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = 1 + static_cast<std::size_t>(trial % 97);
    const std::size_t tile = 1 + static_cast<std::size_t>(trial % 13);
    const float masked_share = trial % 4 == 0 ? 0.0f : 0.5f;
    const std::size_t masked_prefix = trial % 3 == 0 ? n / 2 : 0;  // first tiles all masked
    std::vector<float> s(n), v(n);
    for (std::size_t i = 0; i < n; ++i) {
      s[i] = i < masked_prefix || unit(rng) < masked_share ? kNegInf : normal(rng);
      v[i] = normal(rng);
    }
    INFO("trial " << trial << ": " << n << " keys in tiles of " << tile);
    const Result want = direct(s, v), got = online(s, v, tile);
    if (want.lse == -INFINITY) {
      CHECK(got.lse == kNegInf);
      CHECK(got.out == 0.0);
    } else {
      CHECK(got.lse == Approx(want.lse).epsilon(1e-5).margin(1e-5));
      CHECK(got.out == Approx(want.out).epsilon(1e-4).margin(1e-4));
    }
  }
}

TEST_CASE("a row with no allowed key ends as O = 0, lse = -inf") {
  const std::vector<float> s(10, kNegInf), v(10, 1.0f);
  const Result got = online(s, v, 4);
  CHECK(got.lse == kNegInf);
  CHECK(got.out == 0.0);
  CHECK(std::isinf(rt::hd::finish_row(kNegInf, 0.0f).lse));
  CHECK(rt::hd::finish_row(kNegInf, 0.0f).lse < 0);
  CHECK(rt::hd::finish_row(kNegInf, 0.0f).inv_sum == 0.0f);
}

TEST_CASE("the backward's probability is 0 for masked scores and for rows with lse = -inf") {
  CHECK(rt::hd::probability_from_lse(kNegInf, 1.5f, exp_f) == 0.0f);
  CHECK(rt::hd::probability_from_lse(kNegInf, kNegInf, exp_f) == 0.0f);
  CHECK(rt::hd::probability_from_lse(0.3f, kNegInf, exp_f) == 0.0f);
  CHECK(rt::hd::probability_from_lse(0.25f, 1.0f, exp_f) == Approx(std::exp(-0.75)));
}

TEST_CASE("the first allowed key rescales nothing that was there") {
  const rt::hd::SoftmaxStep first = rt::hd::online_softmax_step(kNegInf, 2.0f, exp_f);
  CHECK(first.max == 2.0f);
  CHECK(first.alpha == 0.0f);
  const rt::hd::SoftmaxStep still_empty = rt::hd::online_softmax_step(kNegInf, kNegInf, exp_f);
  CHECK(still_empty.row_is_empty());
  CHECK(still_empty.alpha == 1.0f);
  const rt::hd::SoftmaxStep lower = rt::hd::online_softmax_step(3.0f, 1.0f, exp_f);
  CHECK(lower.max == 3.0f);
  CHECK(lower.alpha == 1.0f);
}
