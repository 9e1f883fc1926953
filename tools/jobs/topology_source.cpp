#include "tools/jobs/topology_source.hpp"

#include <filesystem>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"

#include "topologies/load.hpp"
#include "topologies/local_calibration.hpp"

namespace burst::jobs {

namespace {

// This machine's GPUs for `local` as the source asks, or nullopt for CPU ranks.
std::optional<topo::LocalGpus> local_gpus(const TopologySource& s) {
  if (s.topology != "local" || s.local_device == "cpu") return std::nullopt;
  std::optional<topo::LocalGpus> gpus = s.probe_gpus ? s.probe_gpus() : std::nullopt;
  if (!gpus && s.local_device == "cuda") {
    throw Error(Problem{"--local-device", "cuda asked for, but no GPU is visible", "cpu",
                        "plan on a GPU node, or plan CPU ranks with --local-device cpu"});
  }
  return gpus;
}

}  // namespace

topo::Topology load_topology_source(const TopologySource& s) {
  std::vector<std::string> notes;
  const std::optional<topo::LocalGpus> gpus = local_gpus(s);
  topo::Topology t = topo::load_topology(s.topology, topo::LoadOptions{.nodes = s.nodes,
                                                                       .per_node = s.per_node,
                                                                       .nvlink_from = s.nvlink_from,
                                                                       .gpu_from = s.gpu_from,
                                                                       .nic_speed = s.nic_speed,
                                                                       .nccl_bandwidths = s.nccl_bandwidths,
                                                                       .local_gpus = gpus ? &*gpus : nullptr,
                                                                       .notes = &notes});
  for (const auto& note : notes) fmt::print(stderr, "note: {}\n", note);
  if (gpus) {
    const bool shared = t.gpus_per_node() > gpus->count;
    fmt::print(stderr, "note: --topology local is this machine's GPUs: {} x {} ({}){}\n", gpus->count, gpus->spec.model,
               gpus->nvlink_Bps > 0 ? "NVLink" : "PCIe",
               shared
                   ? fmt::format("; {} ranks share the first, each with 1/{} of it, as burst run --loopback runs them",
                                 t.gpus_per_node(), t.gpus_per_node())
                   : "");
    const std::string calibration =
        topo::gpu_calibration_beside(topo::local_calibration_write_path(), gpus->spec.model);
    if (calibration.empty() || !std::filesystem::exists(calibration)) {
      fmt::print(stderr,
                 "warning: --topology local on GPUs is uncalibrated: predictions use the {} table's peak and default "
                 "efficiencies. Measure it first (a minute): burst calibrate --device cuda (it writes {})\n",
                 gpus->spec.model, calibration.empty() ? "a file beside $BURST_LOCAL_CALIBRATION" : calibration);
    }
    return t;
  }
  if (s.topology == "local" && topo::local_calibration().source == "defaults") {
    const std::string where = topo::local_calibration_write_path();
    fmt::print(stderr,
               "warning: --topology local is uncalibrated: its speeds are conservative defaults, and predicted step "
               "times can be 3x the measured ones. Measure this machine first (seconds): mpirun -np {} burst calibrate "
               "--per-node {} --device cpu (it writes {})\n",
               t.gpu_count(), t.gpus_per_node(), where.empty() ? "the file $BURST_LOCAL_CALIBRATION names" : where);
  }
  return t;
}

}  // namespace burst::jobs
