// Timing GPU work with CUDA events: an event before and after the work on its stream, the
// elapsed time between them, the best of `repeat` runs after one warm-up run (which pays
// first-touch costs: lazy module loading, cuBLAS heuristics, NCCL connections). The host waits
// for the second event with `wait` (default: cudaEventSynchronize); work that may never finish
// (an NCCL transfer whose peer is gone) passes a wait that polls against a deadline instead.
// Used by `burst bench attention --device cuda` and `burst calibrate --device cuda`.
#pragma once

#include <functional>

#include <cuda_runtime_api.h>

namespace burst::rt::gpu {

using EventWait = std::function<void(cudaEvent_t)>;

// Seconds of the best run. Every CUDA call is checked (burst::Error naming it).
[[nodiscard]] double best_event_time(int repeat, cudaStream_t stream, const std::function<void()>& launch,
                                     const EventWait& wait = {});

}  // namespace burst::rt::gpu
