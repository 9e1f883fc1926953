// Timing GPU work with CUDA events: an event before and after the work on its stream, the
// elapsed time between them, the best of `repeat` runs after one warm-up run (which pays
// first-touch costs: lazy module loading, cuBLAS heuristics, NCCL connections). The host waits
// for the second event with `wait` (default: cudaEventSynchronize); work that may never finish
// (an NCCL transfer whose peer is gone) passes a wait that polls against a deadline instead.
// Used by `burst bench attention --device cuda` and `burst calibrate --device cuda`.
#pragma once

#include <functional>

#include <cuda_runtime_api.h>

#include "runtime/cuda/detail/cuda_event.hpp"

namespace burst::rt::gpu {

using EventWait = std::function<void(cudaEvent_t)>;

// Two timing events around work on a stream (OwnedEvent, EventTiming::On), destroyed however
// their owner ends. Not copyable or movable (a vector of them holds them through unique_ptr or is
// reserved).
class EventPair {
 public:
  EventPair() = default;
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  ~EventPair() = default;

  void record_start(cudaStream_t stream) const;
  void record_stop(cudaStream_t stream) const;
  [[nodiscard]] cudaEvent_t stop() const { return stop_.handle(); }
  // Seconds from start to stop; the stop must have completed (wait for it first).
  [[nodiscard]] double elapsed_s() const;
  // Waits for the stop (cudaEventSynchronize), then elapsed_s().
  [[nodiscard]] double seconds() const;

 private:
  OwnedEvent start_{"timing: before the work", EventTiming::On};
  OwnedEvent stop_{"timing: after the work", EventTiming::On};
};

// Seconds of the best run. Every CUDA call is checked (burst::Error naming it).
[[nodiscard]] double best_event_time(int repeat, cudaStream_t stream, const std::function<void()>& launch,
                                     const EventWait& wait = {});

}  // namespace burst::rt::gpu
