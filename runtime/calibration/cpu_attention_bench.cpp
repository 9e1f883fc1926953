// The CPU attention kernels against sgemm (see cpu_attention_bench.hpp).
#include "runtime/calibration/cpu_attention_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "common/interrupt.hpp"
#include "common/stopwatch.hpp"
#include "common/units.hpp"
#include "runtime/kernels/blas.hpp"
#include "runtime/kernels/parallel.hpp"
#include "runtime/kernels/random_values.hpp"

namespace burst::rt {
namespace {

constexpr int kLargeSgemm = 2048;        // m = n = k of the large sgemm
constexpr double kTileSgemmFlops = 4e9;  // FLOPs per worker per timed run of the tile sgemm

// One thing to time: `run` does `flops` of work (the kernels' own count, known after a run).
struct Measure {
  std::function<void()> run;
  double flops = 0;
  double best_s = 1e30;
  [[nodiscard]] double gflops() const { return flops / best_s / 1e9; }
};

void run_rounds(int rounds, const std::vector<Measure*>& measures) {
  for (int r = 0; r < rounds && !(r > 0 && interrupt_requested()); ++r) {
    fmt::print(stderr, "bench: round {} of {} ...\n", r + 1, rounds);
    for (Measure* m : measures) {
      const auto t0 = std::chrono::steady_clock::now();
      m->run();
      m->best_s = std::min(m->best_s, seconds_since(t0));
    }
  }
}

struct GemmOperands {
  std::vector<float> a, b, c;
};

// C = A B at kLargeSgemm^3, the rows of C split over the workers.
Measure large_sgemm(int workers, GemmOperands& x) {
  constexpr std::int64_t n = kLargeSgemm;
  std::mt19937 rng(1);
  x = {random_values(n * n, rng), random_values(n * n, rng), std::vector<float>(static_cast<std::size_t>(n * n))};
  const std::int64_t rows = (n + workers - 1) / workers;
  return {[workers, rows, &x] {
            parallel_for(workers, workers, [&](int, std::int64_t item) {
              const std::int64_t first = item * rows, count = std::min(rows, n - first);
              gemm(1.0f, ConstMatRef{x.a.data() + first * n, count, n, n}, Op::None, ConstMatRef{x.b.data(), n, n, n},
                   Op::None, 0.0f, MatRef{x.c.data() + first * n, count, n, n});
            });
          },
          gemm_flops(n, n, n)};
}

// C = A B^T at the kernels' tile size (m x k times (n x k)^T), the shape of S = Q K^T: each
// worker on its own operands, back to back.
Measure tile_sgemm(int workers, std::int64_t m, std::int64_t n, std::int64_t k, std::vector<GemmOperands>& x) {
  const auto calls = static_cast<std::int64_t>(std::ceil(kTileSgemmFlops / gemm_flops(m, n, k)));
  std::mt19937 rng(2);
  for (int w = 0; w < workers; ++w) {
    x.push_back(
        {random_values(m * k, rng), random_values(n * k, rng), std::vector<float>(static_cast<std::size_t>(m * n))});
  }
  return {[workers, calls, m, n, k, &x] {
            parallel_for(workers, workers, [&](int, std::int64_t w) {
              GemmOperands& mine = x[static_cast<std::size_t>(w)];
              for (std::int64_t c = 0; c < calls; ++c) {
                gemm(1.0f, ConstMatRef{mine.a.data(), m, k, k}, Op::None, ConstMatRef{mine.b.data(), n, k, k},
                     Op::Transpose, 0.0f, MatRef{mine.c.data(), m, n, n});
              }
            });
          },
          static_cast<double>(workers * calls) * gemm_flops(m, n, k)};
}

}  // namespace

CpuAttentionFigures bench_cpu_attention(const CpuAttentionBench& b) {
  const std::int64_t n = b.tokens;
  const KernelOptions options{b.tile_q, b.tile_k, b.threads};
  single_threaded_blas();

  std::mt19937 rng(3);
  const Shape q_shape{n, b.heads, b.head_dim}, kv_shape{n, b.kv_heads, b.head_dim};
  const std::vector<float> q = random_values(q_shape.elements(), rng), k = random_values(kv_shape.elements(), rng),
                           v = random_values(kv_shape.elements(), rng), d_o = random_values(q_shape.elements(), rng);
  const std::vector<std::int64_t> positions = contiguous_positions(n);
  const BlockPair in{{q.data(), q_shape}, {k.data(), kv_shape}, {v.data(), kv_shape}, positions, positions};
  const AttentionMask mask{b.mask, {}};
  Tensor out(q_shape), d_q(q_shape), d_k(kv_shape), d_v(kv_shape);
  std::vector<float> lse(static_cast<std::size_t>(n * b.heads)), delta(lse.size());

  GemmOperands large_operands;
  std::vector<GemmOperands> tile_operands;
  Measure sgemm = large_sgemm(b.threads, large_operands);
  Measure sgemm_tile = tile_sgemm(b.threads, b.tile_q, b.tile_k, b.head_dim, tile_operands);
  // Each round runs the forward before the backward, which takes its lse; D = rowsum(O * dO)
  // is the first step of the backward and is timed with it.
  CpuAttentionFigures figures;
  Measure forward{[&] { figures.forward = attention_forward(in, mask, out.view(), lse, options); }};
  Measure backward{[&] {
    attention_delta(out.view(), {d_o.data(), q_shape}, delta);
    figures.backward =
        attention_backward(in, mask, {d_o.data(), q_shape}, delta, lse, d_q.view(), d_k.view(), d_v.view(), options);
  }};
  fmt::print(stderr, "bench: attention over {} tokens and sgemm on {} threads\n", units::format_tokens(n), b.threads);
  run_rounds(b.repeat, {&sgemm, &sgemm_tile, &forward, &backward});
  figures.forward_s = forward.best_s;
  figures.backward_s = backward.best_s;
  figures.sgemm_size = kLargeSgemm;
  figures.sgemm_gflops = sgemm.gflops();
  figures.sgemm_tile_gflops = sgemm_tile.gflops();
  return figures;
}

}  // namespace burst::rt
