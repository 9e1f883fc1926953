// burst bench attention: how fast the runtime's CPU attention kernels are, next to the BLAS
// they are built on: forward and backward GFLOP/s over one whole-sequence block pair, and
// sgemm GFLOP/s at a tile-sized and a large size, on the same threads in the same run
// (interleaved rounds, best of each). The goal: forward at least half of large sgemm.
// Figures, not assertions: speed goals live here. --device cuda measures the CUDA kernels
// instead (bench_attention_gpu.hpp).
#include <chrono>
#include <cmath>
#include <functional>
#include <random>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/stopwatch.hpp"
#include "common/parallelism.hpp"
#include "common/units.hpp"
#include "runtime/kernels/attention.hpp"
#include "runtime/kernels/blas.hpp"
#include "runtime/kernels/parallel.hpp"
#include "runtime/kernels/random_values.hpp"
#include "simulator/attention/attention.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/models/model.hpp"
#include "common/interrupt.hpp"
#include "tools/burst/bench_attention_gpu.hpp"
#include "tools/burst/cut_short.hpp"
#include "tools/burst/commands.hpp"
#include "topologies/load.hpp"
#include "tools/burst/validators.hpp"

namespace burst::cli {
namespace {

using rt::random_values;

struct AttentionBenchOptions {
  std::string tokens = "4K";
  int heads = 16;
  int kv_heads = 4;
  int head_dim = 128;
  std::string mask = "causal";
  int repeat = 3;
  int threads = 2;
  int tile_q = 128;
  int tile_k = 128;
  bool json = false;
  std::string device = "cpu";
  bool deterministic = false;
};

constexpr int kLargeSgemm = 2048;        // m = n = k of the large sgemm
constexpr double kTileSgemmFlops = 4e9;  // FLOPs per worker per timed run of the tile sgemm

// One thing to time: `run` does `flops` of work (the kernels' own count, known after a run).
struct Measure {
  std::function<void()> run;
  double flops = 0;
  double best_s = 1e30;
  [[nodiscard]] double gflops() const { return flops / best_s / 1e9; }
};

// Rounds that run every measure once, interleaved, keeping each one's best time: on a shared
// machine the load moves within seconds, and interleaving gives the kernels and the BLAS the
// same chances at a quiet moment.
// Ctrl-C after the first round ends the rounds early: the figures are the best of those run.
void run_rounds(int rounds, std::vector<Measure*> measures) {
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
  const std::int64_t n = kLargeSgemm;
  std::mt19937 rng(1);
  x = {random_values(n * n, rng), random_values(n * n, rng), std::vector<float>(static_cast<std::size_t>(n * n))};
  const std::int64_t rows = (n + workers - 1) / workers;
  return {[workers, rows, n, &x] {
            rt::parallel_for(workers, workers, [&](int, std::int64_t item) {
              const std::int64_t first = item * rows, count = std::min(rows, n - first);
              rt::gemm(1.0f, rt::ConstMatRef{x.a.data() + first * n, count, n, n}, rt::Op::None,
                       rt::ConstMatRef{x.b.data(), n, n, n}, rt::Op::None, 0.0f,
                       rt::MatRef{x.c.data() + first * n, count, n, n});
            });
          },
          rt::gemm_flops(n, n, n)};
}

// The forward's score-tile sgemm (m x n x k = tile_q x tile_k x head_dim, B transposed), each
// worker on its own operands, back to back.
Measure tile_sgemm(int workers, std::int64_t m, std::int64_t n, std::int64_t k, std::vector<GemmOperands>& x) {
  const auto calls = static_cast<std::int64_t>(std::ceil(kTileSgemmFlops / rt::gemm_flops(m, n, k)));
  std::mt19937 rng(2);
  for (int w = 0; w < workers; ++w) {
    x.push_back(
        {random_values(m * k, rng), random_values(n * k, rng), std::vector<float>(static_cast<std::size_t>(m * n))});
  }
  return {[workers, calls, m, n, k, &x] {
            rt::parallel_for(workers, workers, [&](int, std::int64_t w) {
              GemmOperands& mine = x[static_cast<std::size_t>(w)];
              for (std::int64_t call = 0; call < calls; ++call) {
                rt::gemm(1.0f, rt::ConstMatRef{mine.a.data(), m, k, k}, rt::Op::None,
                         rt::ConstMatRef{mine.b.data(), n, k, k}, rt::Op::Transpose, 0.0f,
                         rt::MatRef{mine.c.data(), m, n, n});
              }
            });
          },
          static_cast<double>(workers * calls) * rt::gemm_flops(m, n, k)};
}

struct AttentionBenchSetup {
  std::int64_t tokens = 0;
  std::vector<Mask> masks;  // one, or every kind for --mask all (cuda)
};

// --mask all: each kind once, windows and documents scaled to the sequence.
std::vector<Mask> every_mask(std::int64_t tokens) {
  return {Mask{MaskKind::Full}, Mask{MaskKind::Causal},
          Mask{MaskKind::SlidingWindow, std::max<std::int64_t>(1, tokens / 8)},
          Mask{MaskKind::Document, 0, std::max<std::int64_t>(1, tokens / 4)}};
}

// Every bad option at once.
AttentionBenchSetup resolve(const AttentionBenchOptions& o) {
  Problems problems;
  AttentionBenchSetup setup;
  try {
    setup.tokens = units::parse_tokens(o.tokens, "--tokens");
    if (setup.tokens < 1) problems.add("--tokens", "must be at least 1 token", "a positive whole number, e.g. 4K");
  } catch (const Error& e) {
    for (const auto& p : e.problems()) problems.add(p);
  }
  if (o.mask == "all") {
    if (o.device != "cuda") problems.add("--mask", "all runs every mask on the GPU", "with --device cuda", "");
    setup.masks = every_mask(setup.tokens);
  } else {
    try {
      setup.masks = {parse_mask(o.mask, "--mask")};
    } catch (const Error& e) {
      for (const auto& p : e.problems()) problems.add(p);
    }
  }
  if (o.deterministic && o.device != "cuda") {
    problems.add("--deterministic", "chooses the CUDA backward's mode", "with --device cuda", "");
  }
  if (o.heads % o.kv_heads != 0) {
    problems.add("--kv-heads", fmt::format("{} kv heads do not divide the {} query heads", o.kv_heads, o.heads),
                 "a divisor of --heads",
                 "grouped-query attention shares each kv head among heads / kv_heads query heads");
  }
  problems.throw_if_any();
  return setup;
}

void run_attention(const AttentionBenchOptions& o) {
  const AttentionBenchSetup setup = resolve(o);
  const InterruptScope ctrl_c;
  if (o.device == "cuda") {
    return run_attention_bench_gpu(
        {setup.tokens, o.heads, o.kv_heads, o.head_dim, setup.masks, o.repeat, o.deterministic, o.json});
  }
  const Mask& mask_kind = setup.masks.front();
  const std::int64_t n = setup.tokens;
  const rt::KernelOptions options{o.tile_q, o.tile_k, o.threads};
  rt::single_threaded_blas();

  std::mt19937 rng(3);
  const rt::Shape q_shape{n, o.heads, o.head_dim}, kv_shape{n, o.kv_heads, o.head_dim};
  const std::vector<float> q = random_values(q_shape.elements(), rng), k = random_values(kv_shape.elements(), rng),
                           v = random_values(kv_shape.elements(), rng), d_o = random_values(q_shape.elements(), rng);
  const std::vector<std::int64_t> positions = rt::contiguous_positions(n);
  const rt::BlockPair in{{q.data(), q_shape}, {k.data(), kv_shape}, {v.data(), kv_shape}, positions, positions};
  const rt::AttentionMask mask{mask_kind, {}};
  rt::Tensor out(q_shape), d_q(q_shape), d_k(kv_shape), d_v(kv_shape);
  std::vector<float> lse(static_cast<std::size_t>(n * o.heads)), delta(lse.size());

  GemmOperands large_operands;
  std::vector<GemmOperands> tile_operands;
  Measure sgemm = large_sgemm(o.threads, large_operands);
  Measure sgemm_tile = tile_sgemm(o.threads, o.tile_q, o.tile_k, o.head_dim, tile_operands);
  // Each round runs the forward before the backward, which takes its lse; D = rowsum(O * dO)
  // is the first step of the backward and is timed with it.
  rt::KernelStats fwd, bwd;
  Measure forward{[&] { fwd = rt::attention_forward(in, mask, out.view(), lse, options); }};
  Measure backward{[&] {
    rt::attention_delta(out.view(), {d_o.data(), q_shape}, delta);
    bwd = rt::attention_backward(in, mask, {d_o.data(), q_shape}, delta, lse, d_q.view(), d_k.view(), d_v.view(),
                                 options);
  }};
  fmt::print(stderr, "bench: attention over {} tokens and sgemm on {} threads\n", units::format_tokens(n), o.threads);
  run_rounds(o.repeat, {&sgemm, &sgemm_tile, &forward, &backward});
  forward.flops = fwd.flops;
  backward.flops = bwd.flops;
  const double fwd_s = forward.best_s, bwd_s = backward.best_s;
  const double fwd_gflops = forward.gflops(), bwd_gflops = backward.gflops();
  // The FLOPs the mask asks for (allowed pairs only), per second: what a perfect skip would reach.
  const double useful_gflops = 4.0 * static_cast<double>(o.head_dim) * fwd.allowed_pairs / fwd_s / 1e9;

  const Json result{{"tokens", n},
                    {"heads", o.heads},
                    {"kv_heads", o.kv_heads},
                    {"head_dim", o.head_dim},
                    {"mask", to_string(mask_kind)},
                    {"threads", o.threads},
                    {"tile_q", o.tile_q},
                    {"tile_k", o.tile_k},
                    {"repeat", o.repeat},
                    {"forward_s", fwd_s},
                    {"backward_s", bwd_s},
                    {"forward_flops", fwd.flops},
                    {"backward_flops", bwd.flops},
                    {"tiles_computed", fwd.tiles_computed},
                    {"tiles_skipped", fwd.tiles_skipped},
                    {"forward_gflops", fwd_gflops},
                    {"forward_useful_gflops", useful_gflops},
                    {"backward_gflops", bwd_gflops},
                    {"sgemm_size", kLargeSgemm},
                    {"sgemm_gflops", sgemm.gflops()},
                    {"sgemm_tile_gflops", sgemm_tile.gflops()},
                    {"forward_over_sgemm", fwd_gflops / sgemm.gflops()},
                    {"backward_over_sgemm", bwd_gflops / sgemm.gflops()}};
  if (o.json) {
    fmt::print("{}\n", result.dump(2));
    return;
  }
  fmt::print("attention over {} tokens, {} heads / {} kv heads, head_dim {}, {} mask; {} threads, tiles {} x {}\n",
             units::format_tokens(n), o.heads, o.kv_heads, o.head_dim, to_string(mask_kind), o.threads, o.tile_q,
             o.tile_k);
  fmt::print("{:<34} {:>9} {:>10}\n", "measure", "GFLOP/s", "time ms");
  fmt::print("{:<34} {:>9.1f}\n", fmt::format("sgemm {0}x{0}x{0}", kLargeSgemm), sgemm.gflops());
  fmt::print("{:<34} {:>9.1f}\n", fmt::format("sgemm tile {}x{}x{}", o.tile_q, o.tile_k, o.head_dim),
             sgemm_tile.gflops());
  fmt::print("{:<34} {:>9.1f} {:>10.1f}\n", "attention forward", fwd_gflops, fwd_s * 1e3);
  fmt::print("{:<34} {:>9.1f}\n", "  counting allowed pairs only", useful_gflops);
  fmt::print("{:<34} {:>9.1f} {:>10.1f}\n", "attention backward", bwd_gflops, bwd_s * 1e3);
  fmt::print("forward / sgemm {:.2f} (goal >= 0.5: {}), backward / sgemm {:.2f}\n", fwd_gflops / sgemm.gflops(),
             fwd_gflops >= 0.5 * sgemm.gflops() ? "met" : "NOT met", bwd_gflops / sgemm.gflops());
}

}  // namespace

void add_bench_attention_command(CLI::App& bench) {
  auto a = std::make_shared<AttentionBenchOptions>();
  CLI::App* attention = bench.add_subcommand(
      "attention", "Speed of the attention kernels: CPU against sgemm, or CUDA (--device cuda) against PyTorch SDPA");
  attention->add_option("--tokens", a->tokens, "Sequence length (one block pair), e.g. 4K")->capture_default_str();
  attention->add_option("--heads", a->heads, "Query heads")->check(kAtLeastOne)->capture_default_str();
  attention->add_option("--kv-heads", a->kv_heads, "Key/value heads (a divisor of --heads)")
      ->check(kAtLeastOne)
      ->capture_default_str();
  attention->add_option("--head-dim", a->head_dim, "Head dimension")->check(kAtLeastOne)->capture_default_str();
  attention->add_option("--mask", a->mask, "full, causal, sliding:W or document:L; all: each kind (cuda)")
      ->capture_default_str();
  attention->add_option("--device", a->device, "cpu: the tiled CPU kernels; cuda: the CUDA kernels on GPU 0")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  attention->add_flag("--deterministic", a->deterministic, "cuda: the backward without float atomics");
  attention->add_option("--repeat,--repeats", a->repeat, "Runs per measure; the best is reported")
      ->check(kAtLeastOne)
      ->capture_default_str();
  attention->add_option("--threads", a->threads, "Worker threads (BLAS runs single-threaded in each)")
      ->check(kAtLeastOne)
      ->capture_default_str();
  attention->add_option("--tile-q", a->tile_q, "Queries per tile")->check(kAtLeastOne)->capture_default_str();
  attention->add_option("--tile-k", a->tile_k, "Keys per tile")->check(kAtLeastOne)->capture_default_str();
  attention->add_flag("--json", a->json, "Print the figures as JSON");
  attention->callback([a] {
    run_attention(*a);
    if (interrupt_requested()) throw CutShort("bench attention: cut short by Ctrl-C; the figures are the best of the rounds run");
  });
}

}  // namespace burst::cli
