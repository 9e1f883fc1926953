// Grow-only device buffers (see device_buffer.hpp).
#include "runtime/cuda/detail/device_buffer.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "runtime/cuda/cuda_check.hpp"

namespace burst::rt::gpu {

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) (void)cudaFree(data_);  // a destructor cannot throw; a failed free leaks
}

void* DeviceBuffer::reserve(std::size_t bytes) {
  if (bytes <= bytes_) return data_;
  if (data_ != nullptr) check_cuda(cudaFree(data_), fmt::format("cudaFree({})", name_));
  data_ = nullptr;
  bytes_ = 0;
  check_cuda(cudaMalloc(&data_, bytes), fmt::format("cudaMalloc({}, {} bytes)", name_, bytes));
  bytes_ = bytes;
  return data_;
}

}  // namespace burst::rt::gpu
