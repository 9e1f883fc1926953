// One line of a run's device traffic (the report's "device_traffic" entries, counted by
// runtime/kernels/device_traffic.hpp), as `burst run` and `burst bench training --device` print it.
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "common/json_reader.hpp"

namespace burst::cli {

inline std::string device_traffic_text(const Json& t) {
  return fmt::format("{} B to the device, {} B to the host, {} host waits, {} device syncs, {} driver allocations",
                     t["host_to_device_bytes"].get<std::uint64_t>(), t["device_to_host_bytes"].get<std::uint64_t>(),
                     t["host_waits"].get<std::uint64_t>(), t["device_synchronizations"].get<std::uint64_t>(),
                     t["driver_allocations"].get<std::uint64_t>());
}

}  // namespace burst::cli
