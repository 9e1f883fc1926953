// Forward of one block pair, flash-style: for each (query head, query tile) the key tiles
// stream through an online softmax, so only a tile_q x tile_k score tile and a tile_q x d
// accumulator exist at a time, never nq x nk.
//
// Online softmax (per query row, fp32): keep the running maximum m, the running sum
// l = sum exp(s - m) and the unnormalised output acc = sum exp(s - m) V. A new tile with row
// maximum mx moves the maximum to m' = max(m, mx); the old terms are rescaled by
// alpha = exp(m - m'), the new ones enter as P = exp(S - m'):
//   l = alpha l + rowsum(P),  acc = alpha acc + P V_tile   (the second term is one sgemm)
// At the end O = acc / l and lse = m + log l. A row that has seen no allowed key keeps
// m = -inf, l = 0 and ends as O = 0, lse = -inf. The per-row step (m', alpha, the -inf cases)
// and the row's end are the shared host/device ones of hd/online_softmax.hpp, which the CUDA
// forward runs too; the element loops stay here, where they vectorise.
//
// Kernel: forward_row_of_tiles (one head, one query tile, all key tiles). Launcher:
// attention_forward (checks, tile plan, the (head, query tile) items over the workers).
#include <algorithm>
#include <vector>

#include "runtime/kernels/blas.hpp"
#include "runtime/kernels/checks.hpp"
#include "runtime/kernels/detail/fast_exp.hpp"
#include "runtime/kernels/hd/online_softmax.hpp"
#include "runtime/kernels/parallel.hpp"
#include "runtime/kernels/detail/tiles.hpp"

namespace burst::rt {
namespace {

struct ForwardScratch {
  std::vector<float> s, acc, m, l;
};

// One tile of scores s[rows x cols] through the online softmax: updates m, l, rescales acc
// and leaves P = exp(s - m') in s.
BURST_VECTOR_CLONES void online_softmax(float* s, std::int64_t rows, std::int64_t cols, float* m, float* l,
                                        MatRef acc) {
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = s + r * cols;
    float mx = kNegInf;
#pragma omp simd reduction(max : mx)
    for (std::int64_t c = 0; c < cols; ++c) mx = row[c] > mx ? row[c] : mx;
    const hd::SoftmaxStep step = hd::online_softmax_step(m[r], mx, [](float x) { return fast_exp(x); });
    if (step.row_is_empty()) {  // no allowed key for this row yet: P = 0, acc stays 0
      std::fill(row, row + cols, 0.0f);
      continue;
    }
    const float m_new = step.max;
    const float alpha = step.alpha;
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (std::int64_t c = 0; c < cols; ++c) {
      const float p = fast_exp(row[c] - m_new);
      row[c] = p;
      sum += p;
    }
    l[r] = alpha * l[r] + sum;
    m[r] = m_new;
    if (alpha != 1.0f) {
      float* a = acc.data + r * acc.ld;
#pragma omp simd
      for (std::int64_t c = 0; c < acc.cols; ++c) a[c] *= alpha;
    }
  }
}

KernelStats forward_row_of_tiles(const TilePlan& plan, const BlockPair& in, std::int64_t head, std::size_t qi,
                                 ForwardScratch& w, View o, std::span<float> lse) {
  const Tile& qt = plan.q_tiles()[qi];
  const std::int64_t d = in.q.shape.head_dim;
  const MatRef acc{w.acc.data(), qt.count, d, d};
  std::fill(w.acc.begin(), w.acc.end(), 0.0f);
  std::fill(w.m.begin(), w.m.end(), kNegInf);
  std::fill(w.l.begin(), w.l.end(), 0.0f);
  KernelStats stats;
  for (std::size_t kj = 0; kj < plan.k_tiles().size(); ++kj) {
    const Tile& kt = plan.k_tiles()[kj];
    const std::int64_t allowed = plan.masked_scores(head, qi, kj, w.s.data());
    if (allowed == 0) {
      ++stats.tiles_skipped;
      continue;
    }
    online_softmax(w.s.data(), qt.count, kt.count, w.m.data(), w.l.data(), acc);
    gemm(1.0f, ConstMatRef{w.s.data(), qt.count, kt.count, kt.count}, Op::None,
         in.v.head_rows(head / plan.group(), kt.first, kt.count), Op::None, 1.0f, acc);
    ++stats.tiles_computed;
    stats.flops += 2.0 * gemm_flops(qt.count, kt.count, d);
    stats.allowed_pairs += static_cast<double>(allowed);
  }
  const std::int64_t heads = in.q.shape.heads;
  for (std::int64_t r = 0; r < qt.count; ++r) {
    const std::int64_t t = qt.first + r;
    float* out = o.row(t, head);
    const float* a = acc.data + r * d;
    const hd::RowEnd end = hd::finish_row(w.m[static_cast<std::size_t>(r)], w.l[static_cast<std::size_t>(r)]);
    for (std::int64_t c = 0; c < d; ++c) out[c] = a[c] * end.inv_sum;
    lse[static_cast<std::size_t>(t * heads + head)] = end.lse;
  }
  return stats;
}

}  // namespace

KernelStats attention_forward(const BlockPair& in, const AttentionMask& mask, View o, std::span<float> lse,
                              const KernelOptions& options) {
  constexpr std::string_view kCall = "attention_forward";
  Problems problems;
  check_pair(problems, kCall, in, mask, options);
  check_forward_outputs(problems, kCall, in, o.shape, lse.size());
  problems.throw_if_any();

  single_threaded_blas();
  const TilePlan plan(in, mask, options);
  const std::int64_t q_tiles = static_cast<std::int64_t>(plan.q_tiles().size());
  const std::int64_t items = in.q.shape.heads * q_tiles;
  const int workers = worker_count(options.threads, items);
  const std::size_t tq = plan.max_q_rows(), tk = plan.max_k_rows();
  const auto d = static_cast<std::size_t>(in.q.shape.head_dim);
  std::vector<ForwardScratch> scratch(static_cast<std::size_t>(workers),
                                      ForwardScratch{std::vector<float>(tq * tk), std::vector<float>(tq * d),
                                                     std::vector<float>(tq), std::vector<float>(tq)});
  std::vector<KernelStats> stats(static_cast<std::size_t>(workers));
  parallel_for(workers, items, [&](int worker, std::int64_t item) {
    const auto w = static_cast<std::size_t>(worker);
    stats[w] +=
        forward_row_of_tiles(plan, in, item / q_tiles, static_cast<std::size_t>(item % q_tiles), scratch[w], o, lse);
  });
  KernelStats total;
  for (const KernelStats& s : stats) total += s;
  return total;
}

}  // namespace burst::rt
