// The shared merge of partials (hd/partial_merge.hpp): merging the partials of disjoint key
// sets gives the softmax over their union whatever the grouping and order (associative and
// commutative up to rounding), an empty partial (lse = -inf) is an exact identity on either
// side, and huge score gaps neither overflow nor produce NaN.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "runtime/kernels/hd/partial_merge.hpp"

using namespace burst;
using rt::hd::kNegInf;

namespace {

struct Partial {
  std::vector<float> o;
  float lse = kNegInf;
};

Partial merged(Partial a, const Partial& b) {
  const rt::hd::PartialMerge m = rt::hd::merge_partials(a.lse, b.lse);
  for (std::size_t c = 0; c < a.o.size(); ++c) a.o[c] = rt::hd::merged_value(m, a.o[c], b.o[c]);
  a.lse = m.lse;
  return a;
}

// The partial of scores s and values v (rows of d) in double, rounded to float.
Partial partial_of(const std::vector<double>& s, const std::vector<std::vector<double>>& v, std::size_t d) {
  Partial p{std::vector<float>(d, 0.0f), kNegInf};
  if (s.empty()) return p;
  double mx = -INFINITY;
  for (const double x : s) mx = std::max(mx, x);
  double sum = 0;
  std::vector<double> acc(d, 0.0);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double e = std::exp(s[i] - mx);
    sum += e;
    for (std::size_t c = 0; c < d; ++c) acc[c] += e * v[i][c];
  }
  for (std::size_t c = 0; c < d; ++c) p.o[c] = static_cast<float>(acc[c] / sum);
  p.lse = static_cast<float>(mx + std::log(sum));
  return p;
}

void check_close(const Partial& got, const Partial& want) {
  CHECK(got.lse == Approx(want.lse).epsilon(1e-5).margin(1e-5));
  for (std::size_t c = 0; c < want.o.size(); ++c) CHECK(got.o[c] == Approx(want.o[c]).epsilon(1e-4).margin(1e-5));
}

}  // namespace

TEST_CASE("merging partials of disjoint key sets is the softmax over their union, in any grouping") {
  std::mt19937 rng(9);
  std::normal_distribution<double> normal(0.0, 4.0);
  const std::size_t d = 6;
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<std::vector<double>> s(3);
    std::vector<double> all_s;
    std::vector<std::vector<std::vector<double>>> v(3);
    std::vector<std::vector<double>> all_v;
    for (std::size_t part = 0; part < 3; ++part) {
      const std::size_t n = static_cast<std::size_t>((trial + static_cast<int>(part)) % 5);  // some parts empty
      for (std::size_t i = 0; i < n; ++i) {
        s[part].push_back(normal(rng) + (part == 2 ? 30.0 : 0.0));  // one part far above the others
        std::vector<double> row(d);
        for (double& x : row) x = normal(rng);
        v[part].push_back(row);
        all_s.push_back(s[part].back());
        all_v.push_back(row);
      }
    }
    const Partial a = partial_of(s[0], v[0], d), b = partial_of(s[1], v[1], d), c = partial_of(s[2], v[2], d);
    const Partial want = partial_of(all_s, all_v, d);
    INFO("trial " << trial);
    if (want.lse == kNegInf) {
      CHECK(merged(merged(a, b), c).lse == kNegInf);
      continue;
    }
    check_close(merged(merged(a, b), c), want);
    check_close(merged(a, merged(b, c)), want);
    check_close(merged(merged(c, a), b), want);
  }
}

TEST_CASE("an empty partial is an exact identity on either side") {
  const Partial empty{{0.0f, 0.0f, 0.0f}, kNegInf};
  const Partial x{{0.5f, -1.25f, 3.0f}, 2.75f};
  const Partial left = merged(empty, x), right = merged(x, empty), both = merged(empty, empty);
  CHECK(left.o == x.o);
  CHECK(left.lse == x.lse);
  CHECK(right.o == x.o);
  CHECK(right.lse == x.lse);
  CHECK(both.lse == kNegInf);
  CHECK(both.o == empty.o);
}

TEST_CASE("lse gaps far beyond exp's range merge without overflow") {
  const Partial small{{1.0f}, -500.0f}, large{{2.0f}, 500.0f};
  const Partial m = merged(small, large);
  CHECK(std::isfinite(m.lse));
  CHECK(m.lse == Approx(500.0f));
  CHECK(m.o[0] == Approx(2.0f));
  const Partial n = merged(large, small);
  CHECK(n.lse == Approx(500.0f));
  CHECK(n.o[0] == Approx(2.0f));
}
