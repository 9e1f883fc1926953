// How many CUDA devices this process sees, and why none when it sees none; what the current one is.
//
// cudaGetDeviceCount fails without a driver (cudaErrorInsufficientDriver / NoDevice) or with a
// driver older than the toolkit; CUDA_VISIBLE_DEVICES="" hides every device. None of that is an
// error here: the count is 0 and `reason` says which it was, for `--device cuda` messages and
// for GPU tests, which skip (exit 77) with it.
#pragma once

#include <string>

#include "runtime/cuda/kernel_path.hpp"

namespace burst::rt::gpu {

struct CudaDeviceCount {
  int count = 0;
  std::string reason;  // why count is 0; empty otherwise
};

[[nodiscard]] CudaDeviceCount cuda_device_count();

// Throws burst::Error unless device ordinal `device` is visible: "no CUDA device visible
// (<reason>)", or the ordinal against the count (the CUDA backends' constructors ask first).
void require_cuda_device(int device);

// The compute capability of the calling thread's current device (what picks a kernel path),
// asked of the runtime once per device and thread.
[[nodiscard]] DeviceArch current_device_arch();

}  // namespace burst::rt::gpu
