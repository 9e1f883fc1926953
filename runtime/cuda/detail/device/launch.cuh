// The one launch path of every CUDA kernel of the project (host side of a .cu file; no other
// file writes a <<<>>> launch): a kernel, its grid, block and dynamic shared memory, on a
// stream. It raises the kernel's dynamic shared-memory limit when the launch asks for more than
// the default 48 KiB (the attribute is the kernel's, so it is set before every such launch: a
// process may drive several devices), launches, and checks the launch (check_launch: a bad
// configuration throws burst::Error naming the kernel).
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include <cuda_runtime_api.h>

#include "runtime/cuda/cuda_check.hpp"

namespace burst::rt::gpu {

inline constexpr std::size_t kDefaultSharedBytes = 48 * 1024;

template <typename... Params, typename... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes, cudaStream_t stream,
            const char* name, Args&&... args) {
  if (shared_bytes > kDefaultSharedBytes) {
    check_cuda(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)),
        std::string("cudaFuncSetAttribute(") + name + ", MaxDynamicSharedMemorySize)");
  }
  kernel<<<grid, block, shared_bytes, stream>>>(std::forward<Args>(args)...);
  check_launch(name);
}

}  // namespace burst::rt::gpu
