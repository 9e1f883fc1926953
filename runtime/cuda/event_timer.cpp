#include "runtime/cuda/detail/event_timer.hpp"

#include <algorithm>

#include "runtime/cuda/cuda_check.hpp"

namespace burst::rt::gpu {

void EventPair::record_start(cudaStream_t stream) const {
  check_cuda(cudaEventRecord(start_.handle(), stream), "cudaEventRecord(before the work)");
}

void EventPair::record_stop(cudaStream_t stream) const {
  check_cuda(cudaEventRecord(stop_.handle(), stream), "cudaEventRecord(after the work)");
}

double EventPair::elapsed_s() const {
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, start_.handle(), stop_.handle()), "cudaEventElapsedTime");
  return static_cast<double>(ms) / 1e3;
}

double EventPair::seconds() const {
  check_cuda(cudaEventSynchronize(stop_.handle()), "cudaEventSynchronize(after the work)");
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
