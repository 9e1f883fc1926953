// A micro benchmark of the engines: a ring over every GPU of a topology, `steps` steps, where
// at each step every GPU computes on the block it holds while passing it to its successor
// (the communication pattern of ring attention, without the attention details). It measures
// the engines, not a strategy: `burst bench simulate` covers real lowerings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "simulator/engine/engine.hpp"

namespace burst::sim {

struct RingGraphSpec {
  int steps = 8;
  double flops = 1e12;         // per compute task
  double bytes = 64e6;         // per transfer
  std::int64_t block = 32768;  // tokens, for the compute model
};

// 2 x gpus x steps tasks: step s on GPU g computes on the block that arrived at step s - 1 and
// sends it on to g + 1, one send at a time per GPU.
[[nodiscard]] TaskGraph make_ring_graph(int gpus, const RingGraphSpec& spec);

struct EngineBenchResult {
  std::string engine;
  std::int64_t tasks = 0;
  double build_s = 0;      // building the graph
  double run_s = 0;        // the engine's run
  double tasks_per_s = 0;  // tasks / run_s
  double makespan_s = 0;   // simulated time
};

[[nodiscard]] EngineBenchResult bench_ring(const topo::Topology& topology, std::string_view engine,
                                           const CostModels& models, const RingGraphSpec& spec = {});

}  // namespace burst::sim
