// The physically sane range of every quantity a topology states, so a typo (a subnormal
// bandwidth, 1e308 oversubscription, 1e-300 GB/s) is an error with the range in the message
// instead of a 300-digit step time, a plan marked feasible, or an event engine that never
// finishes. The ranges are wide: a factor of 100 or more beyond any hardware there is.
//
//   bandwidth (links, NIC ports, GPU memory)   1 MBps .. 100 TBps
//   latency (links, fabric)                    0 .. 1 s
//   peak FLOP/s of a GPU                       1 GFLOP/s .. 100 PFLOP/s
//   memory of a GPU                            1 MiB .. 100 TiB
//   fabric oversubscription                    1 .. 1000
//   devices in one node                        1 .. 1024
//   links in one node                          0 .. 16384 (16 a device at the most devices; a
//                                              full NVLink mesh of 1020 GPUs, 520,000 links,
//                                              would make every path search of the node
//                                              minutes of work, and no GPU has 1019 NVLink ports)
#pragma once

#include <string>

#include "common/error.hpp"

namespace burst::topo {

enum class Quantity { Bandwidth, Latency, FlopRate, Memory, Oversubscription };

inline constexpr int kMaxDevicesPerNode = 1024;
inline constexpr int kMaxLinksPerNode = 16 * kMaxDevicesPerNode;

// Adds a problem at `where` when `value` (finite; non-finite values are the caller's to report)
// lies outside the range of `quantity`, e.g.
//   "link bandwidth (B/s) 1e-300 is outside the physical range (valid: 1MBps to 100TBps; ...)".
void check_range(Problems& problems, const std::string& where, const std::string& what, double value,
                 Quantity quantity);

}  // namespace burst::topo
