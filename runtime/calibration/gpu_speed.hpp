// What `burst calibrate --device cuda` measures on each rank's GPU, all ranks at once, and the
// plan of it (host code: the CPU tests read the plan, the GPU test runs it).
//
//   attention  the CUDA flash kernels (runtime/cuda/flash_bench.hpp: device-resident bf16
//              inputs, CUDA events, best of `repeat`) on one (B, B) block pair per block size
//              B, full and causal mask, `heads` heads of `head_dim`; FLOPs as the CPU
//              kernels count them (4 d forward, 10 d backward per computed score); on the kernel
//              path `auto` runs (attention_path), then again on every other path this GPU runs,
//              kept apart (KernelSpeed::path: the file's "attention_paths")
//   gemm       the training step's cuBLASLt product (runtime/cuda/detail/cublaslt_gemm.hpp: bf16
//              inputs and output, fp32 accumulation), a linear layer's forward at n tokens,
//              n in, n out, for n in gemm_sides: the simulator prices a GEMM of m n k at the
//              curve's point cbrt(m n k) (simulator/training/layer_kernels.cpp), so the square
//              side is the curve's block size; 2 n^3 FLOPs
//   elementwise  a device-to-device copy of copy_bytes, counted as bytes read + written
//              (STREAM's Copy, as the CPU copy and the simulator's elementwise bytes count)
// and the GPU's name, PCI address and multiprocessor count. Links: NCCL ping-pong per ring level between
// the pairs of link_pairs (ping_pong.hpp), ncclSend / ncclRecv, one group per direction,
// round trips timed with CUDA events on rank a, the figures by link_speed(). Each measurement is the best of `repeat`
// runs on a rank, then the slowest rank's (runtime/calibration/together.hpp).
//
// The 32 heads of 128 are the published runs' shape behind the default curves (and the
// simulator's curve_ctas: 32 heads x 8K / 128 rows = 2048 thread blocks), so a measured curve
// replaces a default one point for point.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/calibration/kernel_speed.hpp"
#include "runtime/calibration/ping_pong.hpp"
#include "runtime/comm/communicator.hpp"

namespace burst::rt {

struct GpuSpeedOptions {
  std::vector<std::int64_t> blocks = {256, 512, 1024, 2048, 4096, 8192, 16384};
  std::vector<std::int64_t> gemm_sides = {1024, 2048, 4096, 8192, 16384};
  int heads = 32;
  int head_dim = 128;
  std::size_t copy_bytes = std::size_t{1} << 30;
  int repeat = 5;
  int device = 0;  // this rank's GPU (local rank mod visible GPUs)
};

// The few-second plan of --quick (and the GPU test): small blocks, few heads, small copies.
[[nodiscard]] inline GpuSpeedOptions quick_gpu_speed_options(int device) {
  return {{512, 1024}, {512, 1024}, 4, 128, std::size_t{64} << 20, 2, device};
}

struct GpuSpeeds {
  std::string cuda_name;   // cudaDeviceProp::name of this rank's GPU
  std::string pci_bus_id;  // its PCI address as sysfs names it, "0000:3b:00.0"
  int multiprocessors = 0;
  std::string attention_path;  // the kernel path the attention curves ran on (runtime/cuda/kernel_path.hpp)
  // attn_fwd / attn_bwd per mask ("causal", "full"), gemm, elementwise (flops = bytes moved);
  // seconds are the slowest rank's on rank 0 (0 elsewhere).
  std::vector<KernelSpeed> kernels;
};

// Every rank calls it. Throws burst::Error naming the CUDA or cuBLASLt call that failed.
// Defined in runtime/cuda/gpu_speed.cpp (CUDA builds only).
[[nodiscard]] GpuSpeeds measure_gpu_speeds(Communicator& comm, const GpuSpeedOptions& options);

// Every rank calls it: one NCCL communicator over the job, then per pair (in order) the
// ping-pong above while the other ranks wait at a barrier. Result [i] is pairs[i]'s, meaningful
// on its rank a. Defined in runtime/cuda/nccl_ping_pong.cpp (NCCL builds only); NCCL calls
// are polled against the job's timeout.
[[nodiscard]] std::vector<LinkSpeed> nccl_ping_pongs(Communicator& comm, std::span<const LinkPair> pairs,
                                                     const PingPongOptions& options, int device);

}  // namespace burst::rt
