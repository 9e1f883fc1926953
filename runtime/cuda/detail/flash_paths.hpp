// The two implementations of each direction behind flash_forward and flash_backward
// (flash_attention.hpp), which check the arguments and pick one (kernel_path.hpp); each launches
// on `stream` for any shape the checks accept (the backward's: both sides non-empty).
#pragma once

#include <cuda_runtime_api.h>

#include "runtime/cuda/detail/flash_attention.hpp"

namespace burst::rt::gpu {

void flash_forward_mma_sync(const PairInputs& in, float* o, float* lse, cudaStream_t stream);  // flash_forward.cu
void flash_forward_wgmma(const PairInputs& in, float* o, float* lse, cudaStream_t stream);     // flash_forward_sm90.cu

// flash_backward.cu: dQ by float atomics unless `deterministic` (or head dim 128): then two passes.
void flash_backward_mma_sync(const PairInputs& in, const BackwardInputs& grad_in, const Gradients& out,
                             bool deterministic, cudaStream_t stream);
// flash_backward_sm90.cu: two passes always (deterministic).
void flash_backward_wgmma(const PairInputs& in, const BackwardInputs& grad_in, const Gradients& out,
                          cudaStream_t stream);

}  // namespace burst::rt::gpu
