#include "runtime/cuda/event_timer.hpp"

#include <algorithm>

#include "runtime/cuda/cuda_check.hpp"

namespace burst::rt::gpu {
namespace {

// The two events, destroyed however the timing ends.
struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    check_cuda(cudaEventCreate(&start), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  ~EventPair() {
    if (start != nullptr) (void)cudaEventDestroy(start);
    if (stop != nullptr) (void)cudaEventDestroy(stop);
  }
};

}  // namespace

double best_event_time(int repeat, cudaStream_t stream, const std::function<void()>& launch, const EventWait& wait) {
  const EventPair events;
  float best_ms = 1e30f;
  for (int r = 0; r <= repeat; ++r) {
    check_cuda(cudaEventRecord(events.start, stream), "cudaEventRecord");
    launch();
    check_cuda(cudaEventRecord(events.stop, stream), "cudaEventRecord");
    if (wait) {
      wait(events.stop);
    } else {
      check_cuda(cudaEventSynchronize(events.stop), "cudaEventSynchronize");
    }
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, events.start, events.stop), "cudaEventElapsedTime");
    if (r > 0) best_ms = std::min(best_ms, ms);  // run 0 warms up
  }
  return static_cast<double>(best_ms) / 1e3;
}

}  // namespace burst::rt::gpu
