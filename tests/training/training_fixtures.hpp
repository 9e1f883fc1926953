// Small jobs and topologies the training tests share: fast with the analytic engine.
#pragma once

#include "simulator/models/model.hpp"
#include "simulator/training/training.hpp"
#include "topologies/load.hpp"

namespace burst::test {

inline topo::Topology a800(int nodes) {
  topo::LoadOptions options;
  options.nodes = nodes;
  return topo::load_topology("a800-4hca", options);
}

inline sim::TrainingJob job_of(const char* model, std::int64_t seq) {
  sim::TrainingJob job;
  job.model = sim::model_preset(model);
  job.seq = seq;
  job.batch = 1;
  job.mask = Mask{};  // causal
  return job;
}

inline sim::LayerSimOptions analytic() {
  sim::LayerSimOptions options;
  options.engine = "analytic";
  return options;
}

}  // namespace burst::test
