// How fast this machine's ranks run the runtime's CPU kernels, all ranks at once.
//
// For each block size B (tokens per ring block) the attention kernels run on one (B queries,
// B keys) pair with the options `burst run` uses (KernelOptions{}: 128 x 128 tiles, one worker
// per hardware thread), under a causal and a full mask: forward (attention_forward) and
// backward (attention_backward, given the forward's lse and D), each call a ring step around
// every rank (the travelling K,V block received from the previous rank and sent to the next
// while the kernel runs, then waited for), so a kernel is priced as it runs in a ring pass,
// ending with its slowest neighbour where ranks share cores. The FLOPs are the kernels'
// own count (KernelStats::flops: 4 d per computed score forward, 10 d backward), so a causal
// pair is charged its computed tiles, diagonal ones in full. The GEMM figure is the runtime's
// sgemm on a (B tokens x 1024) by (1024 x 1024) product, rows split over the same workers:
// a dense layer's shape, with B as its token count as the simulator's gemm tasks have it.
//
// Small blocks finish in a millisecond, so a timed run repeats a call until it has done at
// least `min_flops_per_run`; each measurement is the median round of the slowest rank
// (together.hpp). On a shared machine the figures move from run to run; ratios between block
// sizes measured in one run are steadier than any single figure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/comm/communicator.hpp"

namespace burst::rt {

struct KernelSpeedOptions {
  std::vector<std::int64_t> blocks = {128, 256, 512, 1024};
  int heads = 4;  // query and key/value heads (multi-head attention)
  int head_dim = 128;
  int rounds = 3;
  double min_flops_per_run = 0.3e9;
};

struct KernelSpeed {
  std::string kernel;  // "attn_fwd", "attn_bwd", "gemm" or "elementwise": the calibration file's curve names
  std::string mask;    // "causal" or "full"; "" for gemm and elementwise
  std::int64_t block = 0;
  double flops = 0;    // per timed run (elementwise: bytes)
  double seconds = 0;  // median round of the slowest rank
  // Attention: the kernel path it ran on when it is not the one the file's curves stand for
  // (runtime/cuda/kernel_path.hpp: measured for comparison, kept apart); "" otherwise.
  std::string path{};
  [[nodiscard]] double flops_per_s() const { return flops / seconds; }
};

// Every rank calls it; the result is complete on rank 0 (other ranks get their own counts
// with seconds = 0).
[[nodiscard]] std::vector<KernelSpeed> measure_kernel_speeds(Communicator& comm, const KernelSpeedOptions& options);

}  // namespace burst::rt
