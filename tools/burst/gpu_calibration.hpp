// The calibration file of `burst calibrate --device cuda`, from what the ranks measured: host
// code only, so the CPU tests build it from made-up measurements and read it back the way
// `burst plan --calibration FILE` does.
//
// The document ("burst.calibration/1", docs/runtime-calibration.md) holds
//   compute[gpu = <model>]   the curves measured (runtime/calibration/curve_points.hpp), as
//                            fractions of the model's peak bf16 FLOP/s and, for elementwise,
//                            of its memory bandwidth (the GpuSpec the simulator prices with),
//                            and the GPU's multiprocessors
//   link_efficiency, latency the NCCL ping-pong per ring level against the topology the plans
//                            use (simulator/costs/measured_links.hpp)
// and no "local" section: it describes a GPU cluster, not this machine's CPU ranks.
// <model> is the GPU table's model name (topologies/hardware.hpp), which the simulator's
// substring match picks over the family's defaults ("H100-SXM5-80GB" beats "H100"). The model
// is found by the GPU's PCI device id, read from sysfs at the PCI address CUDA reports (the
// CUDA runtime itself does not give the id), else by the name CUDA reports.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_reader.hpp"
#include "runtime/calibration/kernel_speed.hpp"
#include "runtime/calibration/ping_pong.hpp"
#include "topologies/hardware.hpp"
#include "topologies/topology.hpp"

namespace burst::cli {

struct GpuMeasurements {
  std::string cuda_name;               // cudaDeviceProp::name
  std::optional<unsigned> pci_device;  // PCI device id (pci_device_of), when known
  int multiprocessors = 0;
  std::vector<rt::KernelSpeed> kernels;  // seconds: the slowest rank's
  std::string attention_path;            // the kernel path the attention ran on
  std::optional<rt::LinkSpeed> intra, inter;
};

// The PCI device id of the device at `bus_id` ("0000:3b:00.0"): `devices_dir`/<bus_id>/device
// holds it as "0x2330". nullopt when the file is missing or holds no hex number.
[[nodiscard]] std::optional<unsigned> pci_device_of(const std::string& bus_id,
                                                    const std::string& devices_dir = "/sys/bus/pci/devices");

// The model of a GPU: by its PCI device id when the table has it, else by its CUDA name.
// Throws burst::Error listing the known names when neither is found (the figures would be
// fractions of an unknown peak).
[[nodiscard]] const topo::hw::GpuModel& gpu_model_of(std::string_view cuda_name, std::optional<unsigned> pci_device);

// The topology the link figures are measured against, with 2 nodes (so it has an inter-node
// path): `requested` (a preset or a file) when given, which must have `model`'s GPUs; else
// the first preset with that GPU model; nullopt when there is none (the links are then not
// written, and the caller says so).
[[nodiscard]] std::optional<topo::Topology> link_topology(const std::string& requested,
                                                          const topo::hw::GpuModel& model);

// The whole document. `links` may be null (no link fields); the link measurements need it.
[[nodiscard]] Json gpu_calibration_document(const GpuMeasurements& m, const topo::Topology* links);

// Where the file goes without -o: beside the local calibration (`local_path`'s folder), named
// after the model ("~/.config/burst/H100-SXM5-80GB.json"); "" when `local_path` is "".
[[nodiscard]] std::string gpu_calibration_path(const std::string& local_path, const topo::hw::GpuModel& model);

}  // namespace burst::cli
