// Tensor parallelism in the iteration model (docs/iteration-model.md): what T GPUs of a node
// divide, what they add (the sequence-parallel all-gathers and reduce-scatters), and the attention
// layer's T copies side by side on the node's GPUs.
#include <catch2/catch.hpp>

#include "simulator/layer_simulation.hpp"
#include "tests/training/training_fixtures.hpp"
#include "topologies/load.hpp"

using namespace burst;

namespace {

topo::Topology dgx(int nodes) {
  topo::LoadOptions options;
  options.nodes = nodes;
  return topo::load_topology("dgx-h100", options);
}

sim::TrainingStrategy at_tp(const sim::TrainingJob& job, const topo::Topology& t, int tp) {
  return sim::training_preset("burst", job, t, tp);
}

}  // namespace

TEST_CASE("tensor parallelism of T divides the model state and every activation by T", "[training][tp]") {
  const auto t = dgx(2);
  const auto job = test::job_of("llama3-8b", 64 * 1024);
  sim::TrainingStrategy one = at_tp(job, t, 1), four = at_tp(job, t, 4);
  // The same knobs but the degree, so only tensor parallelism differs.
  four.attention = one.attention;
  four.checkpoint = one.checkpoint;
  four.lm_head_chunks = one.lm_head_chunks;
  const sim::MemoryBreakdown a = sim::estimate_memory(job, one, t), b = sim::estimate_memory(job, four, t);
  // ZeRO-3 shards over P / T GPUs holding 1 / T each: the shard is the same size; the two
  // gathered layers are 1 / T.
  CHECK(b.optimizer == Approx(a.optimizer));
  CHECK(b.gradients == Approx(a.gradients));
  // The context-parallel rank holds T times the tokens, each GPU 1 / T of their activations.
  CHECK(b.activations == Approx(a.activations));
  CHECK(b.attention_stash == Approx(a.attention_stash));
  CHECK(b.lm_head == Approx(a.lm_head).epsilon(0.01));
  // Replicated parameters (ZeRO 1) divide by T outright.
  one.zero.stage = four.zero.stage = 1;
  CHECK(sim::estimate_memory(job, four, t).params == Approx(sim::estimate_memory(job, one, t).params / 4));
}

TEST_CASE("tensor parallelism's collectives are on the critical path, and 4 more in a recompute", "[training][tp]") {
  const auto t = dgx(2);
  const auto job = test::job_of("llama3-8b", 64 * 1024);
  sim::TrainingStrategy s = at_tp(job, t, 8);
  REQUIRE(sim::check_training(job, s, t).empty());
  const sim::IterationSimulation it = sim::simulate_iteration(job, s, t, test::analytic());
  REQUIRE(it.not_applicable.empty());
  CHECK(it.time.tp_exposed_comm > 0);
  CHECK(it.step_time_s == Approx(it.time.total()));
  // One context-parallel rank of 8 GPUs per node: 2 ranks, 32K tokens each; a forward all-gather
  // moves c h e (T - 1) / T bytes per GPU, 10 a layer (forward 4, backward 6).
  const double c = 32 * 1024, bytes = c * 4096 * 2 * 7.0 / 8;
  const double tp_bytes = 32 * 10 * bytes * (s.checkpoint.policy == CheckpointPolicy::None ? 1.0 : 1.4);
  const sim::TrainingStrategy one = at_tp(job, t, 1);
  const sim::IterationSimulation base = sim::simulate_iteration(job, one, t, test::analytic());
  CHECK(it.comm_bytes_intra > tp_bytes);
  CHECK(base.time.tp_exposed_comm == 0);
}

TEST_CASE("the attention layer of T tensor-parallel ranks runs T copies on heads / T", "[training][tp]") {
  const auto t = dgx(2);
  const auto job = test::job_of("llama3-8b", 64 * 1024);
  const sim::TrainingStrategy s = at_tp(job, t, 4);
  const sim::AttentionShape shape = sim::attention_shape(job, s);
  CHECK(shape.heads == 8);
  CHECK(shape.kv_heads == 2);
  sim::LayerRuns runs;
  const sim::LayerSimulation layer =
      sim::simulate_attention_layer(shape, job.mask, s.attention, t, test::analytic(), &runs);
  REQUIRE(layer.not_applicable.empty());
  // Every GPU of both nodes computes: 4 copies of a world of 2 nodes x 2 ranks.
  std::vector<int> computing(16, 0);
  for (const sim::Task& task : runs.forward.graph.tasks()) {
    if (task.kind == sim::TaskKind::Compute) computing[static_cast<std::size_t>(task.gpu)] = 1;
  }
  CHECK(std::count(computing.begin(), computing.end(), 1) == 16);
  // A transfer stays within its copy: between GPUs of the same tensor-parallel rank.
  for (const sim::Task& task : runs.forward.graph.tasks()) {
    if (task.kind == sim::TaskKind::Transfer) CHECK(task.gpu % 4 == task.peer % 4);
  }
  // A degree that does not divide the node is a reason, not a crash.
  sim::AttentionShape odd = shape;
  odd.tensor_parallel = 3;
  CHECK_THAT(sim::check_applicable(s.attention, odd, job.mask, t), Catch::Contains("tp: tensor parallelism of 3"));
  sim::TrainingStrategy heads = at_tp(job, t, 1);
  heads.tp = 16;
  CHECK_THAT(sim::check_training(job, heads, t),
             Catch::Contains("tensor parallelism of 16 over 32 heads (8 KV heads)"));
}
