// How fast this machine's ranks run a decoder layer's elementwise kernels, all ranks at once:
// the cost models need it because a CPU rank does more than move the bytes a GPU's fused bf16
// kernels move.
//
// For each token count T, one decoder layer's elementwise kernels as the training
// step calls them on its StepKernels (train_step.cpp), on a layer of the given shape:
//   forward   RMSNorm, RoPE on Q and K, the residual add fused with the next RMSNorm, SwiGLU,
//             the residual add
//   backward  SwiGLU's gradient, the two RMSNorms' (each with its residual skip), RoPE back
// The caller gives the work of T tokens (the bytes the cost model counts for those kernels,
// sim::layer_elementwise_bytes), so the efficiency written from it is the model's bytes per
// second over the rank's memory bandwidth: whatever the runtime does beyond those bytes (fp32
// activations on the CPU, the angles RoPE computes, loops that do not stream) is in it.
//
// Each measurement is the median round of the slowest rank (together.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "runtime/calibration/kernel_speed.hpp"
#include "runtime/comm/communicator.hpp"

namespace burst::rt {

struct LayerShape {
  std::int64_t hidden = 512, heads = 4, kv_heads = 4, head_dim = 128, ffn = 1536;
};

struct LayerElementwiseOptions {
  std::vector<std::int64_t> tokens = {256, 1024};
  LayerShape shape;
  int rounds = 3;
  std::int64_t tokens_per_run = 2048;  // a timed run repeats the layer tokens_per_run / T times (at least once)
};

// Every rank calls it; the result is complete on rank 0 (seconds 0 elsewhere): per token count
// T, kernel "elementwise", block = T, flops = `work_of(T)`'s bytes times the layers a timed run
// repeats.
[[nodiscard]] std::vector<KernelSpeed> measure_layer_elementwise(Communicator& comm,
                                                                 const LayerElementwiseOptions& options,
                                                                 const std::function<double(std::int64_t)>& work_of);

}  // namespace burst::rt
