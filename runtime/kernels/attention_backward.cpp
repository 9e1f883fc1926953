// Backward of one block pair, flash-style (FlashAttention-2's loop order): each work item owns
// one (kv head, key tile) and so owns its rows of dK and dV outright; it walks every query
// head of its group and every query tile, recomputing the probabilities from the final lse
// instead of storing them:
//   S = scale Q K^T (masked),  P = exp(S - lse)
//   dV += P^T dO               dP = dO V^T         dS = P * (dP - D)
//   dQ += scale dS K           dK += scale dS^T Q
// Five sgemms of 2 * tile_q * tile_k * d FLOPs each: 2.5 times the forward's two.
//
// dQ rows are shared by every key tile, hence by several workers: worker 0 adds into dQ
// directly, every other worker into its own zeroed copy, and the copies are summed into dQ
// after the workers join (an extra nq x H x d per extra worker, no atomics, deterministic for a
// fixed schedule). Everything accumulates (+=) in fp32: ring steps sum into the same buffers.
//
// Kernel: backward_column_of_tiles (one kv head, one key tile, all its queries). Launcher:
// attention_backward.
#include <algorithm>
#include <limits>
#include <vector>

#include "runtime/kernels/blas.hpp"
#include "runtime/kernels/checks.hpp"
#include "runtime/kernels/detail/fast_exp.hpp"
#include "runtime/kernels/parallel.hpp"
#include "runtime/kernels/detail/tiles.hpp"

namespace burst::rt {
namespace {

struct BackwardScratch {
  std::vector<float> p, dp;
};

struct Gradients {
  ConstView d_o;
  std::span<const float> delta;
  std::span<const float> lse;
  View d_q;  // this worker's dQ (dQ itself or a private copy)
  View d_k;
  View d_v;
};

// s[rows x cols] -> P = exp(s - lse) in place; rows with lse = -inf (no allowed key anywhere)
// get P = 0.
void probabilities(float* s, std::int64_t rows, std::int64_t cols, const float* lse, std::int64_t lse_stride) {
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = s + r * cols;
    const float l = lse[r * lse_stride];
    if (l == kNegInf) {
      std::fill(row, row + cols, 0.0f);
      continue;
    }
#pragma omp simd
    for (std::int64_t c = 0; c < cols; ++c) row[c] = fast_exp(row[c] - l);
  }
}

// dp[rows x cols] -> dS = P * (dP - D) in place.
void score_gradient(const float* p, float* dp, std::int64_t rows, std::int64_t cols, const float* delta,
                    std::int64_t delta_stride) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float dr = delta[r * delta_stride];
    const float* pr = p + r * cols;
    float* row = dp + r * cols;
#pragma omp simd
    for (std::int64_t c = 0; c < cols; ++c) row[c] = pr[c] * (row[c] - dr);
  }
}

KernelStats backward_column_of_tiles(const TilePlan& plan, const BlockPair& in, const Gradients& g,
                                     std::int64_t kv_head, std::size_t kj, BackwardScratch& w) {
  const Tile& kt = plan.k_tiles()[kj];
  const std::int64_t d = in.q.shape.head_dim;
  const std::int64_t heads = in.q.shape.heads;
  const ConstMatRef k = in.k.head_rows(kv_head, kt.first, kt.count);
  const ConstMatRef v = in.v.head_rows(kv_head, kt.first, kt.count);
  const MatRef d_k = g.d_k.head_rows(kv_head, kt.first, kt.count);
  const MatRef d_v = g.d_v.head_rows(kv_head, kt.first, kt.count);
  KernelStats stats;
  for (std::int64_t head = kv_head * plan.group(); head < (kv_head + 1) * plan.group(); ++head) {
    for (std::size_t qi = 0; qi < plan.q_tiles().size(); ++qi) {
      const Tile& qt = plan.q_tiles()[qi];
      const std::int64_t allowed = plan.masked_scores(head, qi, kj, w.p.data());
      if (allowed == 0) {
        ++stats.tiles_skipped;
        continue;
      }
      const std::int64_t row0 = qt.first * heads + head;  // index of (first query, head) in lse and D
      probabilities(w.p.data(), qt.count, kt.count, g.lse.data() + row0, heads);
      const ConstMatRef p{w.p.data(), qt.count, kt.count, kt.count};
      const MatRef dp{w.dp.data(), qt.count, kt.count, kt.count};
      const ConstMatRef d_o = g.d_o.head_rows(head, qt.first, qt.count);
      gemm(1.0f, p, Op::Transpose, d_o, Op::None, 1.0f, d_v);
      gemm(1.0f, d_o, Op::None, v, Op::Transpose, 0.0f, dp);
      score_gradient(w.p.data(), w.dp.data(), qt.count, kt.count, g.delta.data() + row0, heads);
      const ConstMatRef ds{w.dp.data(), qt.count, kt.count, kt.count};
      gemm(plan.scale(), ds, Op::None, k, Op::None, 1.0f, g.d_q.head_rows(head, qt.first, qt.count));
      gemm(plan.scale(), ds, Op::Transpose, in.q.head_rows(head, qt.first, qt.count), Op::None, 1.0f, d_k);
      ++stats.tiles_computed;
      stats.flops += 5.0 * gemm_flops(qt.count, kt.count, d);
      stats.allowed_pairs += static_cast<double>(allowed);
    }
  }
  return stats;
}

}  // namespace

KernelStats attention_backward(const BlockPair& in, const AttentionMask& mask, ConstView d_o,
                               std::span<const float> delta, std::span<const float> lse, View d_q, View d_k, View d_v,
                               const KernelOptions& options) {
  constexpr std::string_view kCall = "attention_backward";
  Problems problems;
  check_pair(problems, kCall, in, mask, options);
  check_backward_arguments(problems, kCall, in, d_o.shape, delta.size(), lse.size(), d_q.shape, d_k.shape, d_v.shape);
  problems.throw_if_any();

  single_threaded_blas();
  const TilePlan plan(in, mask, options);
  const std::int64_t k_tiles = static_cast<std::int64_t>(plan.k_tiles().size());
  const std::int64_t items = in.k.shape.heads * k_tiles;
  const int workers = worker_count(options.threads, items);
  const std::size_t tile = plan.max_q_rows() * plan.max_k_rows();
  std::vector<BackwardScratch> scratch(static_cast<std::size_t>(workers),
                                       BackwardScratch{std::vector<float>(tile), std::vector<float>(tile)});
  std::vector<Tensor> private_d_q(static_cast<std::size_t>(workers - 1), Tensor(in.q.shape));
  std::vector<KernelStats> stats(static_cast<std::size_t>(workers));
  // dQ rows are shared by every key tile: each worker sums its items into a private dQ, so the
  // items are dealt out in a fixed pattern and the run is reproducible bit for bit.
  parallel_for_strided(workers, items, [&](int worker, std::int64_t item) {
    const auto w = static_cast<std::size_t>(worker);
    const Gradients g{d_o, delta, lse, worker == 0 ? d_q : private_d_q[w - 1].view(), d_k, d_v};
    stats[w] +=
        backward_column_of_tiles(plan, in, g, item / k_tiles, static_cast<std::size_t>(item % k_tiles), scratch[w]);
  });
  const std::span<float> out(d_q.data, static_cast<std::size_t>(d_q.shape.elements()));
  for (const Tensor& part : private_d_q) {
    const std::span<const float> add = part.values();
    for (std::size_t i = 0; i < out.size(); ++i) out[i] += add[i];
  }
  KernelStats total;
  for (const KernelStats& s : stats) total += s;
  return total;
}

}  // namespace burst::rt
