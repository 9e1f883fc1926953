// Where a command's topology comes from: a preset, our JSON or an NCCL XML dump, with the
// options that shape it (node count, ranks per virtual node, skeleton completion). Shared by
// `burst topo`, every job-shaped command and the Python module, so they accept the same
// spellings.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "topologies/presets.hpp"
#include "topologies/topology.hpp"

namespace burst::jobs {

struct TopologySource {
  std::string topology;  // preset name or file path
  int nodes = 0;
  int per_node = 0;
  std::string nvlink_from;
  std::string gpu_from;
  std::string nic_speed;
  bool nccl_bandwidths = false;
  // `local`: "cuda" builds it from this machine's GPUs (an error where none is visible), "cpu"
  // from CPU ranks, "" from the GPUs where probe_gpus finds some, else CPU ranks.
  std::string local_device;
  // What the GPUs are (the CLI's CUDA probe); null or nullopt: none (the Python module's).
  std::function<std::optional<topo::LocalGpus>()> probe_gpus;
};

// Loads the topology; what an importer assumed goes to stderr as notes, for the person, and a
// warning when `local` runs on uncalibrated defaults (its predictions can then be 3x off). Says
// on stderr which GPUs a GPU `local` was built from.
[[nodiscard]] topo::Topology load_topology_source(const TopologySource& source);

}  // namespace burst::jobs
