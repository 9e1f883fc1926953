// Data parallelism and gradient accumulation in the training runtime, against the single-rank
// step over the whole global batch (TrainingRun's --check: the loss and every weight gradient
// within 1e-3 relative). Every way the job's ranks split into replicas x context-parallel ranks
// (a ring, Ulysses groups, Ulysses around a ring), with heads sharing KV heads (GQA) and not
// (MHA), under two masks, with micro-batches of one sequence and of two side by side, one or
// several micro-batches a step, and every ZeRO stage (whose collectives then span the replicas).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime/comm/mpi_communicator.hpp"
#include "runtime/training/training_run.hpp"
#include "tests/support/ring_plan.hpp"
#include "tests/support/training_check.hpp"
#include "tests/support/training_options.hpp"

using namespace burst;

namespace {

// One step with --check (tests/support/training_check.hpp), then what data parallelism adds.
void require_trains_like_one_rank(const plan::Plan& plan, rt::Communicator& comm, const std::string& what) {
  const std::optional<rt::TrainingReport> report = test::trained_like_one_rank(plan, comm, 1, what);
  if (!report) return;
  const Json json = report->to_json();
  CHECK(json["plan"]["dp"] == plan.strategy.dp);
  CHECK(json["plan"]["micro_batches"] == plan::accumulation_steps(plan));
  // Stages 2-3 reduce-scatter each unit's gradients in every micro-batch; the whole gradient is
  // all-reduced once a step below that.
  const auto units = static_cast<int>(rt::ModelLayout(plan.job.model).units().size());
  for (const Json& collective : json["zero"]["collectives_per_step"]) {
    if (collective["collective"] == "reduce-scatter")
      CHECK(collective["calls"] == units * plan::accumulation_steps(plan));
    if (collective["of"] == "gradients") CHECK(collective["calls"] == 1);
  }
}

struct Split {
  int dp, ulysses;  // the replica's ranks: ring x ulysses
};

}  // namespace

TEST_CASE("every replicas x context-parallel split of the job trains its global batch like one rank",
          "[training][mpi][data_parallel]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  std::vector<Split> splits;
  for (int dp = 2; dp <= world; dp *= 2) {
    for (int ulysses = 1; ulysses <= world / dp; ulysses *= 2) splits.push_back({dp, ulysses});
  }
  for (const Split& split : splits) {
    const int replica = world / split.dp;
    for (const int kv_heads : {2, 4}) {
      if (kv_heads % split.ulysses != 0) continue;  // a Ulysses member needs whole KV heads
      for (const std::string mask : {"causal", "sliding:12"}) {
        plan::Plan base = test::training_plan(replica, replica / split.ulysses, Layout::Zigzag, BackwardMode::QRing,
                                              CheckpointPolicy::AttnStash, 0, 2, mask, 8, 16, split.ulysses);
        base.job.model.kv_heads = kv_heads;
        const plan::Plan plan = test::data_parallel(base, split.dp, split.dp, 1);
        require_trains_like_one_rank(plan, *comm,
                                     fmt::format("dp {} x ring {} x ulysses {}, {} KV heads, {}", split.dp,
                                                 replica / split.ulysses, split.ulysses, kv_heads, mask));
      }
    }
  }
}

TEST_CASE("micro-batches side by side and accumulated over, at every ZeRO stage, train like one rank",
          "[training][mpi][data_parallel]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  const int replica = world / 2;
  struct Batch {
    int batch, micro_batch;  // over 2 replicas: batch / (2 micro_batch) micro-batches each
    CheckpointPolicy policy;
    Layout layout;
  };
  const std::vector<Batch> batches = {{4, 1, CheckpointPolicy::Full, Layout::Zigzag},
                                      {4, 2, CheckpointPolicy::None, Layout::Contiguous},
                                      {8, 2, CheckpointPolicy::SeqStash, Layout::Striped}};
  for (const Batch& b : batches) {
    for (const int stage : {0, 1, 2, 3}) {
      plan::Plan base = test::training_plan(replica, replica, b.layout, BackwardMode::KvRing, b.policy,
                                            b.policy == CheckpointPolicy::SeqStash ? 0.5 : 0, 1);
      base.strategy.zero.stage = stage;
      const plan::Plan plan = test::data_parallel(base, 2, b.batch, b.micro_batch);
      require_trains_like_one_rank(plan, *comm,
                                   fmt::format("batch {} in micro-batches of {}, {} on {}, ZeRO {}", b.batch,
                                               b.micro_batch, to_string(b.policy), to_string(b.layout), stage));
    }
  }
}

TEST_CASE("a data-parallel plan the job cannot run is refused by pointer", "[training][mpi][data_parallel]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  const plan::Plan base =
      test::training_plan(world / 2, world / 2, Layout::Zigzag, BackwardMode::QRing, CheckpointPolicy::None, 0, 1);
  SECTION("a replica's rings reaching into another replica") {
    plan::Plan plan = test::data_parallel(base, 2, 2, 1);
    for (plan::Ring& ring : plan.rings) {
      if (ring.dp == 1) ring.order.front() = 0;
    }
    CHECK_THROWS_WITH(rt::TrainingRun(plan, *comm, test::training_options(1, false)),
                      Catch::Contains("plan:/rings") && Catch::Contains("replica 1"));
  }
  SECTION("replicas x context-parallel ranks that are not the job") {
    plan::Plan plan = test::data_parallel(base, 2, 2, 1);
    plan.strategy.dp = 4;
    CHECK_THROWS_WITH(rt::TrainingRun(plan, *comm, test::training_options(1, false)),
                      Catch::Contains("plan:/strategy") && Catch::Contains("dp 4"));
  }
}
