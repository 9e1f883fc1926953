// A CUDA stream owned for a scope: created non-blocking (it never waits for the legacy default
// stream) on the current device, and on destruction drained and destroyed, however the scope
// ends (a throw included). The one RAII handle for the streams the backend makes for itself; a
// stream someone else owns is passed around as a plain cudaStream_t.
#pragma once

#include <cuda_runtime_api.h>

#include "runtime/cuda/cuda_check.hpp"

namespace burst::rt::gpu {

class OwnedStream {
 public:
  OwnedStream() { check_cuda(cudaStreamCreateWithFlags(&handle_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"); }
  ~OwnedStream() {  // no throwing here: the work still queued finishes first
    (void)cudaStreamSynchronize(handle_);
    (void)cudaStreamDestroy(handle_);
  }
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;

  [[nodiscard]] cudaStream_t handle() const { return handle_; }

 private:
  cudaStream_t handle_ = nullptr;
};

}  // namespace burst::rt::gpu
