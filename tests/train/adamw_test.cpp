// AdamW: two steps against hand-computed values, global-norm clipping, convergence on a
// quadratic, groups that do not tile the parameters, and ZeRO's shard-by-shard update (the
// global norm, groups cut by the shards) equalling the whole update float for float.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "runtime/training/adamw.hpp"
#include "runtime/training/shard_map.hpp"
#include "tests/support/error_text.hpp"

using namespace burst;

TEST_CASE("two AdamW steps match the hand-computed ones", "[adamw]") {
  // m = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2,  m^ = m / (1 - b1^t),  v^ = v / (1 - b2^t),
  // p = p - lr (m^ / (sqrt(v^) + eps) + wd p), wd only in decaying groups.
  // lr 0.01, b1 0.9, b2 0.95, wd 0.1; parameters 0 and 1 decay, parameter 2 does not.
  std::vector<float> params{1.0f, -2.0f, 0.5f};
  std::vector<float> grads{0.1f, -0.2f, 0.3f};
  const std::vector<rt::ParamGroup> groups{{0, 2, true}, {2, 1, false}};
  const rt::AdamWConfig config{.lr = 0.01f, .weight_decay = 0.1f, .clip_norm = 0.0f};
  rt::AdamWState state;

  // Step 1: m^ = g and v^ = g^2, so the update is g / |g| = +-1:
  //   1 - 0.01 (1 + 0.1 * 1) = 0.989,  -2 - 0.01 (-1 + 0.1 * -2) = -1.988,  0.5 - 0.01 * 1 = 0.49.
  rt::adamw_step(params, grads, groups, state, config);
  CHECK(state.step == 1);
  CHECK(params[0] == Approx(0.989).epsilon(1e-6));
  CHECK(params[1] == Approx(-1.988).epsilon(1e-6));
  CHECK(params[2] == Approx(0.49).epsilon(1e-6));
  CHECK(state.m[1] == Approx(-0.02).epsilon(1e-6));   // 0.1 g
  CHECK(state.v[2] == Approx(0.0045).epsilon(1e-6));  // 0.05 g^2

  // Step 2, g = (0.3, 0, -0.3), corrections 1 - 0.9^2 = 0.19 and 1 - 0.95^2 = 0.0975:
  //   m = (0.039, -0.018, -0.003), v = (0.004975, 0.0019, 0.008775)
  //   m^ / sqrt(v^) = (0.9086921, -0.6786477, -0.0526316)
  //   p = 0.989 - 0.01 (0.9086921 + 0.0989) = 0.9789241, -1.988 - 0.01 (-0.6786477 - 0.1988) = -1.9792255,
  //       0.49 - 0.01 (-0.0526316) = 0.4905263
  grads = {0.3f, 0.0f, -0.3f};
  rt::adamw_step(params, grads, groups, state, config);
  CHECK(state.step == 2);
  CHECK(state.m[0] == Approx(0.039).epsilon(1e-6));
  CHECK(state.v[1] == Approx(0.0019).epsilon(1e-6));
  CHECK(params[0] == Approx(0.9789241).epsilon(1e-6));
  CHECK(params[1] == Approx(-1.9792255).epsilon(1e-6));
  CHECK(params[2] == Approx(0.4905263).epsilon(1e-6));
}

TEST_CASE("clipping scales a large gradient to clip_norm and leaves a small one alone", "[adamw]") {
  const std::vector<rt::ParamGroup> groups{{0, 2, true}};
  const rt::AdamWConfig config{.clip_norm = 1.0f};
  std::vector<float> params{0.0f, 0.0f};

  std::vector<float> large{3.0f, 4.0f};
  rt::AdamWState state;
  CHECK(rt::adamw_step(params, large, groups, state, config) == Approx(5.0));
  CHECK(large[0] == Approx(0.6f));
  CHECK(large[1] == Approx(0.8f));
  CHECK(std::hypot(large[0], large[1]) == Approx(1.0).epsilon(1e-6));

  std::vector<float> small{0.3f, -0.4f};
  CHECK(rt::adamw_step(params, small, groups, state, config) == Approx(0.5));
  CHECK(small == std::vector<float>{0.3f, -0.4f});
}

TEST_CASE("AdamW minimises a quadratic", "[adamw]") {
  // f(p) = sum 0.5 a_i (p_i - c_i)^2, gradient a_i (p_i - c_i); no weight decay, so p -> c.
  const std::vector<double> a{1.0, 4.0, 0.5, 2.0}, c{0.3, -0.7, 1.2, 0.0};
  std::vector<float> params{2.0f, 2.0f, -2.0f, 1.0f}, grads(4);
  const std::vector<rt::ParamGroup> groups{{0, 3, false}, {3, 1, true}};
  const rt::AdamWConfig config{.lr = 0.02f, .weight_decay = 0.0f};
  rt::AdamWState state;
  for (int step = 0; step < 2000; ++step) {
    for (std::size_t i = 0; i < 4; ++i) grads[i] = static_cast<float>(a[i] * (params[i] - c[i]));
    rt::adamw_step(params, grads, groups, state, config);
  }
  for (std::size_t i = 0; i < 4; ++i) CHECK(params[i] == Approx(c[i]).margin(1e-2));
}

TEST_CASE("groups must tile the parameters", "[adamw]") {
  std::vector<float> params(10), grads(10);
  rt::AdamWState state;
  const auto text = [&](std::vector<rt::ParamGroup> groups) {
    return test::error_text([&] { rt::adamw_step(params, grads, groups, state, {}); });
  };
  CHECK(text({{0, 4}, {4, 6, false}}) == "(no error)");
  CHECK(text({{6, 4}, {0, 6}}) == "(no error)");  // any order
  CHECK(text({{0, 4}, {5, 5}}).find("adamw_step: groups: parameters [4, 5) are in no group") != std::string::npos);
  CHECK(text({{0, 6}, {4, 6}}).find("adamw_step: groups: parameters [4, 6) are in two groups") != std::string::npos);
  CHECK(text({{0, 8}}).find("adamw_step: groups: parameters [8, 10) are in no group") != std::string::npos);
  CHECK(text({{0, 12}}).find("adamw_step: groups: groups reach parameter 12 but there are 10") != std::string::npos);

  std::vector<float> short_grads(9);
  const std::vector<rt::ParamGroup> all{{0, 10}};
  CHECK(test::error_text([&] {
          rt::adamw_step(params, short_grads, all, state, {});
        }).find("adamw_step: grads: 9 gradients for 10 parameters") != std::string::npos);
}

TEST_CASE("AdamW on shards, with the global norm, is the whole AdamW float for float", "[adamw][zero]") {
  // 23 parameters in groups that straddle the shard boundaries; gradients large enough to clip.
  const std::size_t n = 23;
  const std::vector<rt::ParamGroup> groups{{0, 5, true}, {5, 1, false}, {6, 12, true}, {18, 5, false}};
  const rt::AdamWConfig config{.lr = 0.01f, .weight_decay = 0.1f, .clip_norm = 1.0f};
  std::vector<float> whole(n), grads(n);
  for (std::size_t i = 0; i < n; ++i) {
    whole[i] = 0.1f * static_cast<float>(i) - 1.0f;
    grads[i] = 0.7f * static_cast<float>((i * 7) % 5) - 1.2f;
  }
  const rt::ShardMap map({{0, 10}, {10, 13}}, 3);  // pieces of 4 and 5: padding in both units
  rt::AdamWState state;
  std::vector<float> sharded = whole;
  std::vector<std::vector<float>> m(3, std::vector<float>(map.shard_size())), v = m;
  for (int step = 1; step <= 3; ++step) {
    std::vector<float> g = grads, g_sharded = grads;
    for (float& x : g) x *= static_cast<float>(step);
    for (float& x : g_sharded) x *= static_cast<float>(step);
    const double norm = rt::adamw_step(whole, g, groups, state, config);
    double squares = 0;
    for (int r = 0; r < 3; ++r) {
      for (const rt::ShardPiece& p : map.pieces(r))
        squares += rt::squared_norm(std::span(g_sharded).subspan(p.flat, p.count));
    }
    CHECK(std::sqrt(squares) == Approx(norm).epsilon(1e-12));
    for (int r = 0; r < 3; ++r) {
      for (const rt::ShardPiece& p : map.pieces(r)) {
        auto& mr = m[static_cast<std::size_t>(r)];
        auto& vr = v[static_cast<std::size_t>(r)];
        rt::adamw_update(
            {p.flat, std::span(sharded).subspan(p.flat, p.count), std::span(g_sharded).subspan(p.flat, p.count),
             std::span(mr).subspan(p.at, p.count), std::span(vr).subspan(p.at, p.count)},
            groups, norm, step, config);
      }
    }
    CHECK(g_sharded == g);  // clipped alike
    CHECK(sharded == whole);
  }
  std::vector<float> m_whole;
  for (int r = 0; r < 3; ++r) {
    std::vector<float> part = m[static_cast<std::size_t>(r)];
    m_whole.insert(m_whole.end(), part.begin(), part.end());
  }
  CHECK(map.assemble(m_whole) == state.m);
  CHECK(test::error_text([&] {
          std::vector<float> p(2), g(3), mm(2), vv(2);
          rt::adamw_update({0, p, g, mm, vv}, groups, 1.0, 0, config);
        }).find("adamw_update: grads: 3 values for 2 parameters") != std::string::npos);
}
