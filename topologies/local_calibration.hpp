// Speeds of the `local` topology (CPU ranks over MPI on this machine), read from a calibration
// file when one exists, else conservative defaults that any laptop exceeds.
//
// The file is found, in order, at $BURST_LOCAL_CALIBRATION, $XDG_CONFIG_HOME/burst/local.json,
// ~/.config/burst/local.json. It is a "burst.calibration/1" JSON document (shared with the
// simulator's cost models); only its "local" section is read here:
//   {"schema": "burst.calibration/1",
//    "local": {"compute_flops_per_rank": "20GFLOPS", "memory_per_rank": "2GiB",
//              "memory_bandwidth_per_rank": "10GBps", "optimizer_params_per_s_per_rank": 5e7,
//              "intra_bandwidth": "5GBps", "intra_latency": "1us",
//              "inter_bandwidth": "2GBps", "inter_latency": "5us"}}
// Every field is optional; a missing one keeps its default. intra_* is rank to rank inside a
// virtual node (shared memory), inter_* between virtual nodes (the loopback "NIC").
// `burst calibrate` writes such a file from measurements (docs/runtime-calibration.md); its
// "compute" section holds the efficiency curves of the GPU model kLocalGpuModel, which the
// simulator's default calibration adopts (simulator/costs/calibration.hpp).
#pragma once

#include <string>

#include "topologies/topology.hpp"

namespace burst::topo {

// The GPU model of every rank of the `local` topology.
inline constexpr const char* kLocalGpuModel = "cpu-rank";

// Whether `gpu` is one of the local topology's CPU ranks (no GPU at all).
[[nodiscard]] inline bool is_cpu_rank(const GpuSpec& gpu) { return gpu.model == kLocalGpuModel; }

struct LocalCalibration {
  double compute_flops_per_rank = 20e9;
  double memory_per_rank = 2.0 * 1024 * 1024 * 1024;
  double memory_bandwidth_per_rank = 10e9;
  // Parameters a second one rank's AdamW step updates (a plain number); 0: not measured, the
  // cost model's GPU formulas apply (simulator/training/optimizer_model.cpp: an HBM pass, or
  // PCIe and a node's CPU-Adam when offloaded).
  double optimizer_params_per_s_per_rank = 0;
  double intra_bandwidth_Bps = 5e9;
  double intra_latency_s = 1 * 1e-6;
  double inter_bandwidth_Bps = 2e9;
  double inter_latency_s = 5 * 1e-6;  // n * 1e-6: the double "5us" parses to
  std::string source = "defaults";    // the file read, or "defaults"
};

// The first existing file of the search order above, or "" when there is none.
[[nodiscard]] std::string find_local_calibration();
// Where a new calibration goes so the search above finds it first: $BURST_LOCAL_CALIBRATION
// when set, else $XDG_CONFIG_HOME/burst/local.json, else ~/.config/burst/local.json ("" when
// none of these variables is set).
[[nodiscard]] std::string local_calibration_write_path();
// Where `burst calibrate --device cuda` keeps a GPU model's calibration: beside the local one,
// <directory of local_path>/<model>.json ("" when local_path is ""). `burst plan --topology local`
// on that GPU reads it from beside local_calibration_write_path() unless --calibration names one.
[[nodiscard]] std::string gpu_calibration_beside(const std::string& local_path, const std::string& model);
// Reads one file; throws burst::Error with every problem.
[[nodiscard]] LocalCalibration read_local_calibration(const std::string& path);
// The calibration `local` uses: the file found, else the defaults.
[[nodiscard]] LocalCalibration local_calibration();

}  // namespace burst::topo
