// Internal to burst_report, and read by `burst report --run`: a run's JSON (`burst run --json`)
// as the figures the report sets beside the plan's predictions.
//
// Two kinds of run: training (`--steps`, recognised by "losses") gives step time parts
// (measured forward, backward, recompute, loss against the plan's predicted parts) and memory
// items (each measured peak against its prediction); attention only (`--attention-only`,
// recognised by "comm_bytes") gives the layer's forward and backward time and the ring bytes
// per link level, measured against the simulator's. A file that is neither, or lacks a field
// the comparison needs, is a burst::Error naming the file and the JSON pointer of the field.
#pragma once

#include <string>
#include <vector>

#include "common/json_reader.hpp"

namespace burst::planner {

struct Compared {
  std::string name;
  double measured = 0;
  double predicted = 0;
  bool has_measured = true;   // false: the runtime does not hold this item
  bool has_predicted = true;  // false: nothing was predicted for it
};

struct RunFigures {
  std::string kind;                   // "training" or "attention only"
  std::vector<Compared> times;        // seconds
  std::vector<Compared> memory;       // bytes per GPU (training)
  std::vector<Compared> level_bytes;  // bytes per rank per link level (attention only)
};

[[nodiscard]] RunFigures read_run(const Json& doc, const std::string& source);

}  // namespace burst::planner
