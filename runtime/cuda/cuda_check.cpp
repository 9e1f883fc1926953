// CUDA errors as burst::Error (see cuda_check.hpp).
#include "runtime/cuda/cuda_check.hpp"

#include <fmt/format.h>

#include "common/error.hpp"

namespace burst::rt::gpu {

void check_cuda(cudaError_t status, std::string_view call) {
  if (status == cudaSuccess) return;
  throw Error(
      Problem{"cuda", fmt::format("{}: {} ({})", call, cudaGetErrorString(status), cudaGetErrorName(status)), "", ""});
}

void check_launch(std::string_view kernel) { check_cuda(cudaGetLastError(), fmt::format("launching {}", kernel)); }

bool is_device_memory(const void* p) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    (void)cudaGetLastError();  // an unregistered host pointer: clear the sticky-free error state
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

}  // namespace burst::rt::gpu
