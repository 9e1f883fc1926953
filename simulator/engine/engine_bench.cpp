#include "simulator/detail/engine/engine_bench.hpp"

#include <chrono>

namespace burst::sim {

TaskGraph make_ring_graph(int gpus, const RingGraphSpec& spec) {
  TaskGraph graph(gpus);
  const auto count = static_cast<std::size_t>(gpus) * static_cast<std::size_t>(spec.steps);
  graph.reserve(2 * count, 4 * count);
  std::vector<TaskId> sent(static_cast<std::size_t>(gpus), -1), previous(static_cast<std::size_t>(gpus), -1);
  for (int step = 0; step < spec.steps; ++step) {
    for (int g = 0; g < gpus; ++g) {
      const TaskId arrived = previous[static_cast<std::size_t>((g + gpus - 1) % gpus)];  // from g - 1, last step
      graph.add_compute({.gpu = g,
                         .stream = 0,
                         .phase = Phase::Forward,
                         .kernel = KernelKind::AttentionForward,
                         .flops = spec.flops,
                         .block_q = spec.block,
                         .block_k = spec.block,
                         .step = step},
                        {arrived});
      sent[static_cast<std::size_t>(g)] = graph.add_transfer({.src = g,
                                                              .dst = (g + 1) % gpus,
                                                              .channel = 0,
                                                              .phase = Phase::Forward,
                                                              .payload = Payload::KV,
                                                              .bytes = spec.bytes,
                                                              .step = step},
                                                             {arrived, sent[static_cast<std::size_t>(g)]});
    }
    previous = sent;
  }
  return graph;
}

EngineBenchResult bench_ring(const topo::Topology& topology, std::string_view engine, const CostModels& models,
                             const RingGraphSpec& spec) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const TaskGraph graph = make_ring_graph(topology.gpu_count(), spec);
  const auto t1 = Clock::now();
  const SimResult result = make_engine(engine)->run(graph, topology, models, {});
  const auto t2 = Clock::now();
  EngineBenchResult r;
  r.engine = std::string(engine);
  r.tasks = static_cast<std::int64_t>(graph.size());
  r.build_s = std::chrono::duration<double>(t1 - t0).count();
  r.run_s = std::chrono::duration<double>(t2 - t1).count();
  r.tasks_per_s = r.run_s > 0 ? static_cast<double>(r.tasks) / r.run_s : 0;
  r.makespan_s = result.makespan_s;
  return r;
}

}  // namespace burst::sim
