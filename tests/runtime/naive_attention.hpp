// An independent reference for the attention kernels: the whole score matrix of each head is
// materialised, softmax and gradients are computed in double straight from the definitions,
// and the mask is a plain predicate over positions written by each test (not the runtime's).
//   s = scale q.k (allowed pairs only), lse = log sum exp s, p = exp(s - lse), o = sum p v
//   D = rowsum(o * dO), dv += p dO, dp = dO.v, ds = p (dp - D), dq += scale ds k, dk += scale ds q
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "runtime/kernels/tensor.hpp"

namespace burst::test {

using Allow = std::function<bool(std::int64_t q, std::int64_t k)>;

struct NaiveAttention {
  std::vector<double> o, lse, d_q, d_k, d_v;
};

inline NaiveAttention naive_attention(const rt::Tensor& q, const rt::Tensor& k, const rt::Tensor& v,
                                      const rt::Tensor& d_o, const std::vector<std::int64_t>& q_pos,
                                      const std::vector<std::int64_t>& k_pos, const Allow& allow) {
  const rt::Shape qs = q.shape(), ks = k.shape();
  const std::int64_t nq = qs.tokens, nk = ks.tokens, heads = qs.heads, kv_heads = ks.heads, d = qs.head_dim;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const auto at = [](const rt::Tensor& t, std::int64_t token, std::int64_t head, std::int64_t c) {
    const rt::Shape& s = t.shape();
    return static_cast<double>(t.values()[static_cast<std::size_t>((token * s.heads + head) * s.head_dim + c)]);
  };
  const auto idx = [d](std::int64_t token, std::int64_t hs, std::int64_t head, std::int64_t c) {
    return static_cast<std::size_t>((token * hs + head) * d + c);
  };
  NaiveAttention r{std::vector<double>(static_cast<std::size_t>(qs.elements())),
                   std::vector<double>(static_cast<std::size_t>(nq * heads)),
                   std::vector<double>(static_cast<std::size_t>(qs.elements())),
                   std::vector<double>(static_cast<std::size_t>(ks.elements())),
                   std::vector<double>(static_cast<std::size_t>(ks.elements()))};
  for (std::int64_t h = 0; h < heads; ++h) {
    const std::int64_t g = h / (heads / kv_heads);
    for (std::int64_t i = 0; i < nq; ++i) {
      std::vector<double> s(static_cast<std::size_t>(nk), -std::numeric_limits<double>::infinity());
      double mx = -std::numeric_limits<double>::infinity();
      for (std::int64_t j = 0; j < nk; ++j) {
        if (!allow(q_pos[static_cast<std::size_t>(i)], k_pos[static_cast<std::size_t>(j)])) continue;
        double dot = 0;
        for (std::int64_t c = 0; c < d; ++c) dot += at(q, i, h, c) * at(k, j, g, c);
        s[static_cast<std::size_t>(j)] = scale * dot;
        mx = std::max(mx, scale * dot);
      }
      const auto row = static_cast<std::size_t>(i * heads + h);
      if (mx == -std::numeric_limits<double>::infinity()) {
        r.lse[row] = mx;
        continue;
      }
      double sum = 0;
      for (double x : s) sum += std::exp(x - mx);
      const double lse = mx + std::log(sum);
      r.lse[row] = lse;
      std::vector<double> p(static_cast<std::size_t>(nk));
      for (std::int64_t j = 0; j < nk; ++j)
        p[static_cast<std::size_t>(j)] = std::exp(s[static_cast<std::size_t>(j)] - lse);
      for (std::int64_t j = 0; j < nk; ++j) {
        for (std::int64_t c = 0; c < d; ++c)
          r.o[idx(i, heads, h, c)] += p[static_cast<std::size_t>(j)] * at(v, j, g, c);
      }
      double delta = 0;
      for (std::int64_t c = 0; c < d; ++c) delta += r.o[idx(i, heads, h, c)] * at(d_o, i, h, c);
      for (std::int64_t j = 0; j < nk; ++j) {
        const double pj = p[static_cast<std::size_t>(j)];
        if (pj == 0) continue;
        double dp = 0;
        for (std::int64_t c = 0; c < d; ++c) dp += at(d_o, i, h, c) * at(v, j, g, c);
        const double ds = pj * (dp - delta);
        for (std::int64_t c = 0; c < d; ++c) {
          r.d_v[idx(j, kv_heads, g, c)] += pj * at(d_o, i, h, c);
          r.d_q[idx(i, heads, h, c)] += scale * ds * at(k, j, g, c);
          r.d_k[idx(j, kv_heads, g, c)] += scale * ds * at(q, i, h, c);
        }
      }
    }
  }
  return r;
}

inline rt::Tensor random_tensor(rt::Shape shape, std::mt19937& rng) {
  rt::Tensor t(shape);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& x : t.values()) x = normal(rng);
  return t;
}

// Ring-layout position arrays for rank `rank` of `ranks` over a sequence of n tokens.
inline std::vector<std::int64_t> zigzag_positions(std::int64_t n, std::int64_t ranks, std::int64_t rank) {
  const std::int64_t chunk = n / (2 * ranks);
  std::vector<std::int64_t> pos;
  for (std::int64_t c : {rank, 2 * ranks - 1 - rank}) {
    for (std::int64_t t = 0; t < chunk; ++t) pos.push_back(c * chunk + t);
  }
  return pos;
}
inline std::vector<std::int64_t> striped_positions(std::int64_t n, std::int64_t ranks, std::int64_t rank) {
  std::vector<std::int64_t> pos;
  for (std::int64_t t = rank; t < n; t += ranks) pos.push_back(t);
  return pos;
}

}  // namespace burst::test
