// Measured point-to-point figures (`burst calibrate --device cuda`: NCCL between two GPUs of a
// node, and between GPUs of two nodes) as the calibrated communication model's own fields, so
// that a plan on the topology they were measured against predicts what was measured.
//
// The model prices a transfer as latency[path class] + the path's wire latency, then bytes at
// each crossed link's raw bandwidth x link_efficiency[link kind] (comm_models.cpp). For the
// path between the measured pair (GPUs 0 and 1 for intra, GPU 0 and the first GPU of node 1
// for inter) that means:
//   link_efficiency[kind of the path's slowest link] = measured bandwidth / that link's raw
//                                                      bandwidth (at most 1)
//   latency[path class]                              = measured latency - wire latency (>= 0)
// so an uncontended transfer over that path costs what the measurement found. When both
// levels name the same link kind (a PCIe-only node whose inter path is capped by PCIe too),
// the lower efficiency is kept: no level is predicted faster than it was measured.
#pragma once

#include <optional>

#include "common/json_reader.hpp"
#include "topologies/topology.hpp"

namespace burst::sim {

struct MeasuredLink {
  double bandwidth_Bps = 0;  // one way, latency removed
  double latency_s = 0;
};

// {"link_efficiency": {...}, "latency": {...}} of a "burst.calibration/1" document, with an
// entry per level measured (none: that level is left out). Throws burst::Error when a level is
// given that the topology lacks (intra on one GPU per node, inter on one node).
[[nodiscard]] Json measured_link_fields(const topo::Topology& topology, const std::optional<MeasuredLink>& intra,
                                        const std::optional<MeasuredLink>& inter);

}  // namespace burst::sim
