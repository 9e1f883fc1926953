// One line of a run's device traffic (TrainingReport::device_traffic, counted by
// runtime/kernels/device_traffic.hpp), as `burst run` and `burst bench training --device` print it.
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "runtime/training/training_report.hpp"  // rt::DeviceTraffic

namespace burst::cli {

inline std::string device_traffic_text(const rt::DeviceTraffic& t) {
  return fmt::format(
      "{} B to the device, {} B to the host, {} host waits, {} device syncs, {} driver allocations, {} page faults",
      t.host_to_device_bytes, t.device_to_host_bytes, t.host_waits, t.device_synchronizations, t.driver_allocations,
      t.host_page_faults);
}

}  // namespace burst::cli
