// Internal to burst_report, and read by `burst report --run`: a run's JSON (`burst run --json`)
// as the figures the report sets beside the plan's predictions.
//
// Two kinds of run: training (`--steps`, recognised by "losses") gives step time parts
// (measured forward, backward, attention, recompute, LM head and ZeRO collectives, paired with
// the plan's predicted parts by training_times) and memory
// items (each measured peak against its prediction); attention only (`--attention-only`,
// recognised by "comm_bytes") gives the layer's forward and backward time and the ring bytes
// per link level, measured against the simulator's. A file that is neither, or lacks a field
// the comparison needs, is a burst::Error naming the file and the JSON pointer of the field.
#pragma once

#include <string>
#include <vector>

#include "common/json_reader.hpp"
#include "plan/plan.hpp"

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

// A training run's times beside the plan's own parts: each measured part the runtime times
// apart (the attention's rings, recompute, the LM head and loss, the ZeRO collectives it waited
// for) with the sum of the plan's items it covers, the forward and backward as measured (the
// plan does not split by pass), the step against the step, then the plan's items no measured
// part covers (dense layers, elementwise work, TP's collectives, the optimizer), predicted only.
[[nodiscard]] std::vector<Compared> training_times(const RunFigures& run, const plan::Plan& plan);

}  // namespace burst::planner
