// The options every job-shaped command shares (topology, model, sequence, mask, cost models),
// and their resolution into the objects the simulator takes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/json_reader.hpp"
#include "simulator/attention/attention.hpp"
#include "simulator/cost_model.hpp"
#include "simulator/models/model.hpp"
#include "tools/jobs/topology_source.hpp"
#include "topologies/topology.hpp"

namespace burst::jobs {

struct JobOptions {
  TopologySource topology;
  std::string model;                 // a preset name or a Hugging Face config.json path ...
  std::optional<Json> model_config;  // ... or such a config already parsed (the Python API's dicts)
  std::int64_t vocab = 0;            // > 0: replaces the model's vocabulary size
  std::string seq;
  int batch = 1;             // sequences per optimizer step (the global batch) ...
  std::string batch_tokens;  // ... or, when set, that many tokens: a whole number of sequences
  std::string mask = "causal";
  std::string dtype = "bf16";  // bf16 or fp32: what is stored and sent (plan /job/dtype)
  std::string compute_model = "roofline";
  std::string comm_model = "calibrated";
  std::string calibration;
  std::string kernel_path = "auto";  // the CUDA kernel path whose measured attention curves price the job
};

struct Job {
  std::shared_ptr<const topo::Topology> topology;
  sim::ModelSpec model;
  sim::AttentionShape shape;
  sim::Mask mask;
  sim::CostModels models;
};

// Resolves every option, collecting all problems before failing (burst::Error).
[[nodiscard]] Job resolve_job(const JobOptions& options);
// "burst-14b at 1M tokens (causal) on a800-4hca x 4 nodes = 32 GPUs ..."
[[nodiscard]] std::string describe_job(const Job& job);
[[nodiscard]] Json job_json(const Job& job);

}  // namespace burst::jobs
