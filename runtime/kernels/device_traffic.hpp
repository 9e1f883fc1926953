// What a process moves between host and device, and how often the host waits for the device,
// counted where it happens so that it cannot creep back unseen.
//
// A GPU step is fast only when its tensors stay on the device: every host round trip costs a
// copy across PCIe and a wait that drains the device's queue, and every allocation the memory
// pool cannot serve goes to the driver (which may synchronise). So each layer that can cause one
// counts it here:
//   host_to_device_bytes    KernelMemory::store, uploads of parameters, token ids, tile lists
//   device_to_host_bytes    KernelMemory::load, the loss and the gradient norm, host gradients
//   host_waits              the host blocked until a stream (or an event on it) drained
//   device_synchronizations the host blocked until the whole device drained (cudaDeviceSynchronize)
//   driver_allocations      memory taken from the driver: a pool that grew, cudaMalloc, cudaHostAlloc
//   host_page_faults        pages the OS mapped for the process on first touch (its minor faults,
//                           host_memory.hpp): host memory taken anew, the CPU's counterpart of a
//                           driver allocation
// The counts are process-wide (a loopback job's rank threads add into the same totals) and
// monotonic; a caller takes a snapshot before and after what it measures (the training run does
// per step, and its report prints the steady state's; the counters test of the GPU step's data
// flow asserts on them). The CUDA layers count on the GPU; the device-memory stand-in of the CPU
// tests (tests/support/bf16_step_kernels.hpp) counts what the same calls would move.
#pragma once

#include <cstdint>

namespace burst::rt {

struct DeviceTraffic {
  std::uint64_t host_to_device_bytes = 0;
  std::uint64_t device_to_host_bytes = 0;
  std::uint64_t host_waits = 0;
  std::uint64_t device_synchronizations = 0;
  std::uint64_t driver_allocations = 0;
  std::uint64_t host_page_faults = 0;

  // What happened between two snapshots (`*this` the later one).
  [[nodiscard]] DeviceTraffic since(const DeviceTraffic& earlier) const;
  friend bool operator==(const DeviceTraffic&, const DeviceTraffic&) = default;
};

// The totals so far.
[[nodiscard]] DeviceTraffic device_traffic();

void count_host_to_device(std::uint64_t bytes);
void count_device_to_host(std::uint64_t bytes);
void count_host_wait();
void count_device_synchronization();
void count_driver_allocation();

}  // namespace burst::rt
