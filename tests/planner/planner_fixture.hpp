// Shared setup for planner tests: a topology preset at a node count and a search request for a
// preset model, on the analytic engine (exact where links are uncontended, and fast).
#pragma once

#include <string>

#include "common/units.hpp"
#include "planner/search/search.hpp"
#include "simulator/models/model.hpp"
#include "topologies/load.hpp"

namespace burst::test {

inline topo::Topology preset(const std::string& name, int nodes) {
  topo::LoadOptions options;
  options.nodes = nodes;
  return topo::load_topology(name, options);
}

inline planner::SearchRequest request(const std::string& model, const std::string& seq,
                                      const std::string& mask = "causal") {
  planner::SearchRequest r;
  r.job.model = sim::model_preset(model);
  r.job.seq = units::parse_tokens(seq, "seq");
  r.job.mask = parse_mask(mask, "mask");
  r.simulation.engine = "analytic";
  return r;
}

}  // namespace burst::test
