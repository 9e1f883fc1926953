// Dynamic and strided work distribution over std::threads (see parallel.hpp).
#include "runtime/kernels/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace burst::rt {

namespace {

// Runs work(w) on workers w = 1 .. workers - 1 in threads and w = 0 in the caller.
template <typename Work>
void on_workers(int workers, const Work& work) {
  std::vector<std::jthread> threads;
  threads.reserve(static_cast<std::size_t>(std::max(workers - 1, 0)));
  for (int w = 1; w < workers; ++w) threads.emplace_back(work, w);
  work(0);
}

}  // namespace

void parallel_for(int workers, std::int64_t items, const std::function<void(int, std::int64_t)>& body) {
  std::atomic<std::int64_t> next{0};
  on_workers(workers, [&](int worker) {
    for (std::int64_t item = next++; item < items; item = next++) body(worker, item);
  });
}

void parallel_for_strided(int workers, std::int64_t items, const std::function<void(int, std::int64_t)>& body) {
  on_workers(workers, [&](int worker) {
    for (std::int64_t item = worker; item < items; item += workers) body(worker, item);
  });
}

int worker_count(int threads, std::int64_t items) {
  const std::int64_t wanted = threads > 0 ? threads : static_cast<std::int64_t>(std::thread::hardware_concurrency());
  return static_cast<int>(std::max<std::int64_t>(1, std::min(wanted, items)));
}

}  // namespace burst::rt
