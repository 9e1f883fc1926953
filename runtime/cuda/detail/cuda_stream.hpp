// A CUDA stream owned by one object: created non-blocking (it never waits for the legacy default
// stream) on the current device, and on destruction drained and destroyed, however the owner ends
// (a throw included). The one RAII handle for the streams the backend makes for itself (events
// have theirs, cuda_event.hpp); a stream someone else owns is passed around as a plain
// cudaStream_t.
//
// Why drain. cudaStreamDestroy alone would not wait (CUDA releases the stream once its work is
// done), but the owner usually frees, right after, what that work reads: its staging buffers, its
// pool, the host arrays an upload copies from. Draining first makes "the stream is gone" mean
// "nothing queued on it runs any more". The drain ends only when the queued work does, so an owner
// whose stream may hold work that never ends on its own (NCCL kernels waiting on a peer that is
// gone) destroys the stream only after ncclCommAbort (NCCL's kernels then exit) or after the
// communicator was finalized and settled (nothing of it is left to run): nccl_collectives.cpp,
// nccl_communicator.cpp and nccl_ping_pong.cpp release their streams in that order.
//
// Move-only: one owner at a time. A moved-from OwnedStream holds no stream and its destructor does
// nothing (a null cudaStream_t is the legacy default stream, never this handle's to drain). An
// owner that makes its stream later than itself (after cudaSetDevice, after its communicator)
// holds a std::optional<OwnedStream>, and resetting it is where the stream goes.
#pragma once

#include <utility>

#include <cuda_runtime_api.h>

#include "runtime/cuda/cuda_check.hpp"

namespace burst::rt::gpu {

class OwnedStream {
 public:
  OwnedStream() { check_cuda(cudaStreamCreateWithFlags(&handle_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"); }
  ~OwnedStream() { release(); }  // no throwing here: the work still queued finishes first
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  OwnedStream(OwnedStream&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  OwnedStream& operator=(OwnedStream&& other) noexcept {
    if (this != &other) {
      release();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }

  // The stream; null only in a moved-from OwnedStream.
  [[nodiscard]] cudaStream_t handle() const { return handle_; }

 private:
  void release() noexcept {
    if (handle_ == nullptr) return;
    (void)cudaStreamSynchronize(handle_);
    (void)cudaStreamDestroy(handle_);
    handle_ = nullptr;
  }

  cudaStream_t handle_ = nullptr;
};

}  // namespace burst::rt::gpu
