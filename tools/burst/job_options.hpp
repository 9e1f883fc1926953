// The command-line options every job-shaped command shares (topology, model, sequence, mask,
// cost models); what they resolve to lives in tools/jobs/job.hpp.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/burst/topology_source.hpp"
#include "tools/jobs/job.hpp"

namespace burst::cli {

using jobs::describe_job;
using jobs::Job;
using jobs::job_json;
using jobs::JobOptions;
using jobs::resolve_job;

void add_job_options(CLI::App& cmd, JobOptions& options);

}  // namespace burst::cli
