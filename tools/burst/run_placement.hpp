// The placement check of `burst run` (planner/launch/placement.hpp): every rank's host and
// local rank gathered, then checked against the plan on every rank before anything else runs.
#pragma once

#include <optional>
#include <string>

#include "plan/plan.hpp"
#include "runtime/comm/communicator.hpp"

namespace burst::cli {

// Reads the plan at `plan_path` (once: the run takes it from here) and returns it when the job
// may run it (rank 0 prints a note when there is one). On a mismatch rank 0 throws the
// burst::Error (the rank, its host, the plan's node, the line to use) and the other ranks get
// nullopt, to end quietly. A plan that cannot be read fails here the same way, once.
[[nodiscard]] std::optional<plan::Plan> read_placed_plan(const std::string& plan_path, rt::Communicator& comm);

}  // namespace burst::cli
