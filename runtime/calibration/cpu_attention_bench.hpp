// The CPU attention kernels timed beside the BLAS they are built on (`burst bench attention`):
// forward and backward over one whole-sequence block pair, and sgemm at a tile-sized and a
// large size, on the same worker threads in the same run. Rounds run every measure once,
// interleaved, keeping each one's best time: on a shared machine the load moves within
// seconds, and interleaving gives the kernels and the BLAS the same chances at a quiet moment.
// Ctrl-C after the first round ends the rounds early; the figures are the best of those run.
#pragma once

#include <cstdint>

#include "common/parallelism.hpp"
#include "runtime/kernels/attention.hpp"

namespace burst::rt {

struct CpuAttentionBench {
  std::int64_t tokens = 4096;
  int heads = 16;
  int kv_heads = 4;
  int head_dim = 128;
  Mask mask{MaskKind::Causal};
  int repeat = 3;   // rounds
  int threads = 2;  // worker threads, each sgemm single-threaded inside its worker
  int tile_q = 128;
  int tile_k = 128;
};

struct CpuAttentionFigures {
  double forward_s = 0;   // best round
  double backward_s = 0;  // D = rowsum(O * dO) included: the backward's first step
  KernelStats forward, backward;
  int sgemm_size = 0;  // m = n = k of the large sgemm, its rows split over the workers
  double sgemm_gflops = 0;
  double sgemm_tile_gflops = 0;  // every worker on its own tile_q x tile_k x head_dim products
};

// Runs the rounds (progress on stderr); random inputs from a fixed seed.
[[nodiscard]] CpuAttentionFigures bench_cpu_attention(const CpuAttentionBench& bench);

}  // namespace burst::rt
