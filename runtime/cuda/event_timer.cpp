#include "runtime/cuda/detail/event_timer.hpp"

#include <algorithm>

#include "runtime/cuda/cuda_check.hpp"

namespace burst::rt::gpu {

EventPair::EventPair() {
  check_cuda(cudaEventCreate(&start_), "cudaEventCreate");
  if (const cudaError_t made = cudaEventCreate(&stop_); made != cudaSuccess) {
    (void)cudaEventDestroy(start_);  // the destructor does not run for a constructor that throws
    check_cuda(made, "cudaEventCreate");
  }
}

EventPair::~EventPair() {
  (void)cudaEventDestroy(start_);
  (void)cudaEventDestroy(stop_);
}

void EventPair::record_start(cudaStream_t stream) const {
  check_cuda(cudaEventRecord(start_, stream), "cudaEventRecord(before the work)");
}

void EventPair::record_stop(cudaStream_t stream) const {
  check_cuda(cudaEventRecord(stop_, stream), "cudaEventRecord(after the work)");
}

double EventPair::elapsed_s() const {
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
  return static_cast<double>(ms) / 1e3;
}

double EventPair::seconds() const {
  check_cuda(cudaEventSynchronize(stop_), "cudaEventSynchronize(after the work)");
  return elapsed_s();
}

double best_event_time(int repeat, cudaStream_t stream, const std::function<void()>& launch, const EventWait& wait) {
  const EventPair events;
  double best = 1e30;
  for (int r = 0; r <= repeat; ++r) {
    events.record_start(stream);
    launch();
    events.record_stop(stream);
    const double s = wait ? (wait(events.stop()), events.elapsed_s()) : events.seconds();
    if (r > 0) best = std::min(best, s);  // run 0 warms up
  }
  return best;
}

}  // namespace burst::rt::gpu
