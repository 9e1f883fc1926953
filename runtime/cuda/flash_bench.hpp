// Kernel speed on this GPU, for `burst bench attention --device cuda`: one whole-sequence block
// pair with every input already in device memory, so the figures are the kernels' own (no
// staging). Inputs are random bf16 values; the tile lists are built and uploaded once. Each
// measure is the best of `repeat` runs after one warm-up, timed with CUDA events on the
// kernels' stream: the forward (flash_forward), and the backward as the executor runs it
// (attention_delta, then flash_backward). Two FLOP counts, every head: the work the kernels
// do, forward 4 d and backward 10 d per score of a computed tile (as KernelStats and the CPU
// kernels count it, so calibrations of either device price the same work), and the useful work,
// the same per (query, key) pair that attends: FlashAttention's own count for the full and
// causal masks (tools/bench/sdpa_bench.py), so the two stand side by side whatever tile shapes
// either uses. Both directions run on the kernel path asked for (kernel_path.hpp); on any path
// but mma.sync each runs once more and once on mma.sync, on the same inputs (the forward into
// outputs set to NaN first, the backward into gradients set to zero), and the largest
// differences of O and lse, and of dQ, dK and dV, between the two are reported (both paths round
// the same bf16 inputs and accumulate in fp32, so they agree to about the bf16 rounding of P).
#pragma once

#include <cstdint>
#include <string>

#include "runtime/cuda/kernel_path.hpp"
#include "runtime/kernels/attention_mask.hpp"

namespace burst::rt::gpu {

struct FlashBenchCase {
  std::int64_t tokens = 0;
  int heads = 0, kv_heads = 0, head_dim = 0;
  AttentionMask mask;
  int repeat = 3;
  bool deterministic = false;
  int device = 0;
  KernelPathChoice path = KernelPathChoice::Auto;
};

struct FlashBenchResult {
  double forward_s = 0, backward_s = 0;
  double forward_flops = 0, backward_flops = 0;            // computed tiles' scores
  double forward_pair_flops = 0, backward_pair_flops = 0;  // attending pairs
  std::int64_t tiles_computed = 0, tiles_skipped = 0;      // per head, of the 64 x 64 key-major list
  KernelPath forward_path = KernelPath::MmaSync;           // the forward's path that ran
  KernelPath backward_path = KernelPath::MmaSync;          // the backward's
  // Largest |O - O_mma.sync| and |lse - lse_mma.sync| over every row (-1: the forward ran mma.sync).
  double o_max_diff = -1, lse_max_diff = -1;
  // Largest |dQ - dQ_mma.sync|, and of dK and dV (-1: the backward ran mma.sync).
  double d_q_max_diff = -1, d_k_max_diff = -1, d_v_max_diff = -1;
  std::string device_name;
};

// Throws burst::Error when no GPU is visible or a CUDA call fails (naming the call).
[[nodiscard]] FlashBenchResult bench_flash(const FlashBenchCase& c);

}  // namespace burst::rt::gpu
