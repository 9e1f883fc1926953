// Every CUDA runtime call of the backend goes through check_cuda, which turns a failure into
// burst::Error naming the call and CUDA's own message ("cudaMalloc(d_q, 4194304 bytes):
// out of memory (cudaErrorMemoryAllocation)"). Kernel launches are checked with
// check_launch (cudaGetLastError: bad configuration, too much shared memory) at the launch;
// faults inside a kernel surface at the next synchronising call, which is checked too.
#pragma once

#include <string_view>

#include <cuda_runtime_api.h>

namespace burst::rt::gpu {

void check_cuda(cudaError_t status, std::string_view call);
void check_launch(std::string_view kernel);

}  // namespace burst::rt::gpu
