// A grow-only device allocation: the CUDA backend keeps one per tensor it uploads and reuses it
// across calls, growing it (free, then cudaMalloc of the new size) only when a call needs more,
// so a training run allocates during its first steps and then never again.
#pragma once

#include <cstddef>
#include <string>

namespace burst::rt::gpu {

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::string name) : name_(std::move(name)) {}
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // At least `bytes` of device memory (contents not kept when it grows).
  void* reserve(std::size_t bytes);
  template <typename T>
  T* reserve_for(std::size_t count) {
    return static_cast<T*>(reserve(count * sizeof(T)));
  }

 private:
  std::string name_;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace burst::rt::gpu
