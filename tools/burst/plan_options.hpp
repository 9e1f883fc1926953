// The command-line options every planning command shares (plan, capacity, whatif); what they
// resolve to lives in tools/jobs/planning.hpp.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/burst/job_options.hpp"
#include "tools/jobs/planning.hpp"

namespace burst::cli {

using jobs::PlanningJob;
using jobs::PlanOptions;
using jobs::resolve_planning;

void add_plan_options(CLI::App& cmd, PlanOptions& options);

}  // namespace burst::cli
