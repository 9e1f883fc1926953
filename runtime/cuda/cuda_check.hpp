// Every CUDA runtime call of the backend goes through check_cuda, which turns a failure into
// burst::Error naming the call and CUDA's own message ("cudaMalloc(d_q, 4194304 bytes):
// out of memory (cudaErrorMemoryAllocation)"). Kernel launches are checked with
// check_launch (cudaGetLastError: bad configuration, too much shared memory) at the launch;
// faults inside a kernel surface at the next synchronising call, which is checked too.
// is_device_memory tells the buffers NCCL may be handed from host memory.
#pragma once

#include <string_view>

#include <cuda_runtime_api.h>

namespace burst::rt::gpu {

void check_cuda(cudaError_t status, std::string_view call);
void check_launch(std::string_view kernel);

// True for memory a GPU kernel can address directly (device or managed); false for host memory,
// pageable or pinned, which NCCL must not be handed.
[[nodiscard]] bool is_device_memory(const void* p);

}  // namespace burst::rt::gpu
