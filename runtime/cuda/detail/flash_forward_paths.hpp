// The forward's two implementations behind flash_forward (flash_attention.hpp), which checks the
// arguments and picks one (kernel_path.hpp); each launches on `stream` for any shape the checks
// accept.
#pragma once

#include <cuda_runtime_api.h>

#include "runtime/cuda/detail/flash_attention.hpp"

namespace burst::rt::gpu {

void flash_forward_mma_sync(const PairInputs& in, float* o, float* lse, cudaStream_t stream);  // flash_forward.cu
void flash_forward_wgmma(const PairInputs& in, float* o, float* lse, cudaStream_t stream);     // flash_forward_sm90.cu

}  // namespace burst::rt::gpu
