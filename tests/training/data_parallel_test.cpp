// Data parallelism and gradient accumulation in the iteration model (docs/iteration-model.md):
// where the replicas sit, what a replica's shorter ring saves, what repeats per micro-batch and
// what runs once per step.
#include <catch2/catch.hpp>

#include <set>

#include "simulator/attention/ring.hpp"
#include "simulator/layer_simulation.hpp"
#include "tests/training/training_fixtures.hpp"

using namespace burst;
using burst::test::a800;
using burst::test::analytic;
using burst::test::job_of;

namespace {

sim::IterationSimulation simulate(const sim::TrainingJob& job, const sim::TrainingStrategy& s,
                                  const topo::Topology& t) {
  return sim::simulate_iteration(job, s, t, analytic());
}

// The burst preset with the knobs of `base` but the given parallelism.
sim::TrainingStrategy parallel(const sim::TrainingStrategy& base, int dp, int micro_batch) {
  sim::TrainingStrategy s = base;
  s.dp = dp;
  s.micro_batch = micro_batch;
  return s;
}

double network_bytes(const sim::PhaseFigures& phase) {
  return phase.link_bytes_per_rank[static_cast<std::size_t>(topo::LinkKind::Network)];
}

}  // namespace

TEST_CASE("a replica is whole nodes or an equal part of one", "[training][dp]") {
  const auto t = a800(4);  // 4 nodes of 8 GPUs
  CHECK(sim::replica_world(t, 1, 1).size() == 32);
  CHECK(sim::replica_world(t, 1, 2).nodes == 2);
  CHECK(sim::replica_world(t, 1, 2).gpus_per_node == 8);
  CHECK(sim::replica_world(t, 1, 8).nodes == 1);
  CHECK(sim::replica_world(t, 1, 8).gpus_per_node == 4);
  CHECK(sim::replica_world(t, 2, 8).size() == 2);  // tensor-parallel groups of 2: 4 per node, 2 per replica
  CHECK(sim::replica_world(t, 1, 3).size() == 0);  // 3 replicas do not split 4 nodes
  CHECK(sim::replica_world(t, 1, 12).size() == 0);
  CHECK(sim::replica_world(t, 1, 64).size() == 0);  // half a GPU each
}

TEST_CASE("every GPU is one rank of one copy: tensor-parallel innermost, replicas outermost", "[training][dp]") {
  const auto t = a800(2);
  const int tp = 2, dp = 4;
  const sim::World world = sim::replica_world(t, tp, dp);
  REQUIRE(world.size() == 2);
  std::set<int> seen;
  for (int copy = 0; copy < tp * dp; ++copy) {
    for (int rank = 0; rank < world.size(); ++rank) {
      const int gpu = sim::topology_gpu(tp, world.size(), rank, copy);
      CHECK(seen.insert(gpu).second);
      CHECK(gpu % tp == copy % tp);                   // the tensor-parallel rank
      CHECK(gpu / (tp * world.size()) == copy / tp);  // the replica's block of GPUs
    }
  }
  CHECK(seen.size() == 16);
}

TEST_CASE("replicas of one node each keep the ring off the network", "[training][dp]") {
  const auto t = a800(4);
  auto job = job_of("burst-7b", 64 * 1024);
  job.batch = 4;
  const sim::TrainingStrategy base = sim::training_preset("burst", job, t);
  REQUIRE(base.dp == 1);
  REQUIRE(base.micro_batch == 1);  // the preset runs one sequence at a time
  sim::TrainingStrategy flat = parallel(base, 1, 4), replicas = parallel(base, 4, 1);
  flat.attention.ring = replicas.attention.ring = RingKind::Flat;
  const auto a = simulate(job, flat, t), b = simulate(job, replicas, t);
  REQUIRE(a.not_applicable.empty());
  REQUIRE(b.not_applicable.empty());
  // One ring over 32 GPUs crosses nodes; four rings of one node each never do.
  CHECK(network_bytes(a.attention.forward) > 0);
  CHECK(network_bytes(b.attention.forward) == 0);
  // The same tokens and the same model FLOPs either way.
  CHECK(b.model_flops == Approx(a.model_flops).epsilon(1e-9));
  // A replica's rank carries seq / 8 tokens of one sequence, a flat rank seq / 32 of each of four.
  CHECK(sim::local_tokens(job, t, replicas) == Approx(64 * 1024 / 8.0));
  CHECK(sim::local_tokens(job, t, flat) == Approx(4 * 64 * 1024 / 32.0));
  // ZeRO still shards over all 32 GPUs: the optimizer state is the same size.
  CHECK(b.memory.optimizer == Approx(a.memory.optimizer));
}

TEST_CASE("gradient accumulation repeats the micro-batch's work, not the step's", "[training][dp]") {
  const auto t = a800(2);
  auto one = job_of("burst-7b", 64 * 1024);
  auto four = one;
  four.batch = 4;
  sim::TrainingStrategy s = sim::training_preset("burst", one, t);
  REQUIRE(s.micro_batch == 1);
  for (const int stage : {1, 3}) {
    s.zero.stage = stage;
    const auto a = simulate(one, s, t), b = simulate(four, s, t);  // four micro-batches of one sequence
    REQUIRE(b.not_applicable.empty());
    CHECK(sim::accumulation_steps(four, s) == 4);
    CHECK(b.time.dense_compute == Approx(4 * a.time.dense_compute));
    CHECK(b.time.attention_compute == Approx(4 * a.time.attention_compute));
    CHECK(b.time.lm_head == Approx(4 * a.time.lm_head));
    CHECK(b.time.optimizer == Approx(a.time.optimizer));  // one step
    CHECK(b.model_flops == Approx(4 * a.model_flops));
    // One micro-batch is alive at a time: no more activation memory.
    CHECK(b.memory.activations == Approx(a.memory.activations));
    // The network carries the ring's hops (every micro-batch) and the ZeRO collectives: stage 1
    // reduces the accumulated gradients and gathers the parameters once per step, stage 3 gathers
    // and reduces in every micro-batch.
    const double ratio = b.comm_bytes_inter / a.comm_bytes_inter;
    if (stage == 1) CHECK(ratio < 3.5);
    if (stage == 3) CHECK(ratio == Approx(4));
  }
}

TEST_CASE("a batch the replicas cannot split evenly is refused, with the reason", "[training][dp]") {
  const auto t = a800(4);
  auto job = job_of("burst-7b", 64 * 1024);
  job.batch = 6;
  const sim::TrainingStrategy base = sim::training_preset("burst", job, t);
  CHECK_THAT(sim::check_training(job, parallel(base, 4, 1), t),
             Catch::Contains("6 sequences per step over 4 replicas of micro-batches of 1"));
  CHECK_THAT(sim::check_training(job, parallel(base, 3, 2), t),
             Catch::Contains("3 data-parallel replicas over 4 nodes"));
  CHECK(sim::check_training(job, parallel(base, 2, 3), t).empty());
  CHECK(sim::check_training(job, parallel(base, 2, 1), t).empty());
}
