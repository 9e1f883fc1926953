// The options every job-shaped command shares (topology, model, sequence, mask, cost models),
// and their resolution into the objects the simulator takes.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "common/json_reader.hpp"
#include "simulator/attention/attention.hpp"
#include "simulator/cost_model.hpp"
#include "simulator/models/model.hpp"
#include "tools/burst/topology_source.hpp"
#include "topologies/topology.hpp"

namespace burst::cli {

struct JobOptions {
  TopologySource topology;
  std::string model;
  std::int64_t vocab = 0;  // > 0: replaces the model's vocabulary size
  std::string seq;
  int batch = 1;
  std::string mask = "causal";
  std::string dtype = "bf16";  // bf16 or fp32: what is stored and sent (plan /job/dtype)
  std::string compute_model = "roofline";
  std::string comm_model = "calibrated";
  std::string calibration;
};

struct Job {
  std::shared_ptr<const topo::Topology> topology;
  sim::ModelSpec model;
  sim::AttentionShape shape;
  sim::Mask mask;
  sim::CostModels models;
};

void add_job_options(CLI::App& cmd, JobOptions& options);
// Resolves every option, collecting all problems before failing.
[[nodiscard]] Job resolve_job(const JobOptions& options);
// "burst-14b at 1M tokens (causal) on a800-4hca x 4 nodes = 32 GPUs ..."
[[nodiscard]] std::string describe_job(const Job& job);
[[nodiscard]] Json job_json(const Job& job);

}  // namespace burst::cli
