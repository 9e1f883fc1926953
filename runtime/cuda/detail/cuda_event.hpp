// A CUDA event owned by one object: the one RAII handle for the events the backend makes for
// itself (streams have theirs, cuda_stream.hpp); an event someone else owns is passed around as
// a plain cudaEvent_t.
//
// An event marks a point in a stream's work (cudaEventRecord). Another stream can wait for that
// point without the host waiting (cudaStreamWaitEvent: how a group's stream follows the kernels'
// stream, or one loopback rank's copy follows another's), and the host can ask whether the
// device has passed it (cudaEventQuery, cudaEventSynchronize: how a staging slot is known free, or
// an NCCL group done). That is ordering, and ordering needs no clock: an event is made with
// cudaEventDisableTiming unless its owner asks for EventTiming::On, which only the timers
// (event_timer.hpp) do, to read cudaEventElapsedTime between two events. CUDA documents events
// without timing as the faster ones to wait on (cudaStreamWaitEvent) and to query.
//
// Destroying an event never waits: one the device has not reached yet is released by CUDA once
// the device passes it, and a stream already waiting on it keeps waiting for that point. So the
// destructor destroys and nothing else (unlike OwnedStream's, it has no queued work to drain), and
// an event may go as soon as the last cudaStreamWaitEvent on it is queued.
//
// Move-only: one owner at a time. A moved-from OwnedEvent holds no event and its destructor does
// nothing; code that may or may not hold an event (one made on first use, one set once a group is
// issued) says so with std::optional<OwnedEvent>, and an event several owners wait on with
// std::shared_ptr<OwnedEvent>. A failed creation throws burst::Error through check_cuda, naming
// the call and what the event is for: "cudaEventCreateWithFlags(a loopback message): ...".
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <cuda_runtime_api.h>

#include "runtime/cuda/cuda_check.hpp"

namespace burst::rt::gpu {

enum class EventTiming { Off, On };  // Off: ordering only (cudaEventDisableTiming)

class OwnedEvent {
 public:
  // An event on the current device; `purpose` names it in the error if CUDA refuses one.
  explicit OwnedEvent(std::string_view purpose, EventTiming timing = EventTiming::Off) {
    const unsigned flags = timing == EventTiming::On ? cudaEventDefault : cudaEventDisableTiming;
    if (const cudaError_t made = cudaEventCreateWithFlags(&handle_, flags); made != cudaSuccess) {
      check_cuda(made, std::string("cudaEventCreateWithFlags(").append(purpose).append(")"));
    }
  }
  ~OwnedEvent() { release(); }  // no throwing here
  OwnedEvent(const OwnedEvent&) = delete;
  OwnedEvent& operator=(const OwnedEvent&) = delete;
  OwnedEvent(OwnedEvent&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  OwnedEvent& operator=(OwnedEvent&& other) noexcept {
    if (this != &other) {
      release();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }

  // The event; null only in a moved-from OwnedEvent.
  [[nodiscard]] cudaEvent_t handle() const { return handle_; }

 private:
  void release() noexcept {
    if (handle_ != nullptr) (void)cudaEventDestroy(handle_);
    handle_ = nullptr;
  }

  cudaEvent_t handle_ = nullptr;
};

}  // namespace burst::rt::gpu
