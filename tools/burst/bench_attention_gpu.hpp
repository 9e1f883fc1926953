// `burst bench attention --device cuda`: the CUDA kernels' TFLOP/s, forward and backward, per
// mask, on device-resident inputs (runtime/cuda/flash_bench.hpp), beside PyTorch's
// scaled_dot_product_attention (FlashAttention-2 through PyTorch) on the same GPU and shape when
// python3 can import torch (tools/bench/sdpa_bench.py); otherwise it says why that column is empty.
// Each row names the kernel path of its forward and backward (runtime/cuda/kernel_path.hpp);
// `all_paths` runs every path the GPU supports, a row each, and a forward on a path other than
// mma.sync reports its largest difference from mma.sync's on the same inputs.
#pragma once

#include <cstdint>
#include <vector>

#include "common/parallelism.hpp"
#include "runtime/cuda/kernel_path.hpp"

namespace burst::cli {

struct GpuAttentionBench {
  std::int64_t tokens = 0;
  int heads = 0, kv_heads = 0, head_dim = 0;
  std::vector<Mask> masks;
  int repeat = 3;
  bool deterministic = false;
  bool json = false;
  rt::gpu::KernelPathChoice path = rt::gpu::KernelPathChoice::Auto;
  bool all_paths = false;  // every path the device supports (path ignored)
};

// Throws burst::Error (exit 2) where no GPU is visible or burst was built without CUDA.
void run_attention_bench_gpu(const GpuAttentionBench& bench);

}  // namespace burst::cli
