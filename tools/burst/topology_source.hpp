// Where a command's topology comes from: a preset, our JSON or an NCCL XML dump, with the
// options that shape it (node count, ranks per virtual node, skeleton completion). Shared by
// `burst topo` and every job-shaped command so they accept the same spellings.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "topologies/topology.hpp"

namespace burst::cli {

struct TopologySource {
  std::string topology;  // preset name or file path
  int nodes = 0;
  int per_node = 0;
  std::string nvlink_from;
  std::string gpu_from;
  std::string nic_speed;
};

// Adds --nodes, --nvlink-from, --gpu-from, --nic-speed (and --per-node when asked); the
// topology itself is added by the command (positional for `topo`, --topology for jobs).
void add_topology_source_options(CLI::App& cmd, TopologySource& source, bool with_per_node);

// Loads the topology; what an importer assumed goes to stderr as notes, for the person.
[[nodiscard]] topo::Topology load_topology_source(const TopologySource& source);

}  // namespace burst::cli
