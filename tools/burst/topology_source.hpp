// The command-line spelling of where a topology comes from (tools/jobs/topology_source.hpp):
// shared by `burst topo` and every job-shaped command so they accept the same options.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/jobs/topology_source.hpp"

namespace burst::cli {

using jobs::load_topology_source;
using jobs::TopologySource;

// Adds --nodes, --nvlink-from, --gpu-from, --nic-speed (and --per-node and --local-device, with
// the CUDA probe of this machine's GPUs, when asked); the
// topology itself is added by the command (positional for `topo`, --topology for jobs).
void add_topology_source_options(CLI::App& cmd, TopologySource& source, bool with_per_node);

}  // namespace burst::cli
