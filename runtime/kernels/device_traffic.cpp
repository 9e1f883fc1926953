// The process-wide counters of device_traffic.hpp: relaxed atomics (rank threads add at once;
// a snapshot needs no ordering with the work it counts beyond the caller's own).
#include "runtime/kernels/device_traffic.hpp"

#include <atomic>

#include "common/host_memory.hpp"

namespace burst::rt {
namespace {

struct Counters {
  std::atomic<std::uint64_t> host_to_device{0}, device_to_host{0}, host_waits{0}, device_syncs{0},
      driver_allocations{0};
};

Counters& counters() {
  static Counters c;
  return c;
}

void add(std::atomic<std::uint64_t>& counter, std::uint64_t n) { counter.fetch_add(n, std::memory_order_relaxed); }

}  // namespace

DeviceTraffic DeviceTraffic::since(const DeviceTraffic& earlier) const {
  return {host_to_device_bytes - earlier.host_to_device_bytes,
          device_to_host_bytes - earlier.device_to_host_bytes,
          host_waits - earlier.host_waits,
          device_synchronizations - earlier.device_synchronizations,
          driver_allocations - earlier.driver_allocations,
          host_page_faults - earlier.host_page_faults};
}

DeviceTraffic device_traffic() {
  const Counters& c = counters();
  return {c.host_to_device.load(std::memory_order_relaxed),     c.device_to_host.load(std::memory_order_relaxed),
          c.host_waits.load(std::memory_order_relaxed),         c.device_syncs.load(std::memory_order_relaxed),
          c.driver_allocations.load(std::memory_order_relaxed), host_page_faults()};
}

void count_host_to_device(std::uint64_t bytes) { add(counters().host_to_device, bytes); }
void count_device_to_host(std::uint64_t bytes) { add(counters().device_to_host, bytes); }
void count_host_wait() { add(counters().host_waits, 1); }
void count_device_synchronization() { add(counters().device_syncs, 1); }
void count_driver_allocation() { add(counters().driver_allocations, 1); }

}  // namespace burst::rt
