// Tensor parallelism with sequence parallelism in the training runtime, inside context and data
// parallelism, against the single-rank step over the whole global batch (TrainingRun's --check:
// the loss and every weight gradient within 1e-3 relative). Every way the job's ranks split into
// tensor-parallel groups x context-parallel ranks (a ring, Ulysses groups) x replicas, with heads
// sharing KV heads (GQA) and not (MHA), under two masks; every ZeRO stage, whose collectives then
// run over the ranks holding one tensor-parallel part; the bytes each rank sends in the
// sequence-parallel collectives against the simulator's count; saving the whole model and resuming,
// tensor-parallel or on a ring; and the plans the runtime refuses.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime/comm/mpi_communicator.hpp"
#include "runtime/training/training_run.hpp"
#include "simulator/training/training.hpp"
#include "tests/support/ring_plan.hpp"
#include "tests/support/training_check.hpp"
#include "tests/support/training_options.hpp"

using namespace burst;

namespace {

// Two steps with --check (tests/support/training_check.hpp; the second after AdamW has moved
// every part: the parts must have stepped as one model), then what tensor parallelism adds.
void require_trains_like_one_rank(const plan::Plan& plan, rt::Communicator& comm, const std::string& what) {
  const std::optional<rt::TrainingReport> report = test::trained_like_one_rank(plan, comm, 2, what);
  if (!report) return;
  const Json json = report->to_json();
  CHECK(json["plan"]["tp"] == plan.strategy.tp);
  CHECK(json["plan"]["dp"] == plan.strategy.dp);
  // The loss fell on the second step: the parts updated consistently.
  CHECK(report->steps.size() == 2);
  CHECK(report->steps.back().loss < report->steps.front().loss);
}

struct Split {
  int tp, dp, ulysses;  // a replica's context-parallel world: ring x ulysses
};

}  // namespace

TEST_CASE("every tensor x context x data-parallel split of the job trains like one rank",
          "[training][mpi][tensor_parallel]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  std::vector<Split> splits;
  for (int tp = 2; tp <= world && tp <= 4; tp *= 2) {
    for (int dp = 1; tp * dp <= world; dp *= 2) {
      for (int ulysses = 1; tp * dp * ulysses <= world; ulysses *= 2) splits.push_back({tp, dp, ulysses});
    }
  }
  int kv_case = 0;
  for (const Split& split : splits) {
    const int context = world / (split.tp * split.dp);  // ring x ulysses ranks
    // The model has 4 heads: a tensor-parallel rank's 4 / tp are what its Ulysses group splits.
    if ((4 / split.tp) % split.ulysses != 0) continue;
    // MHA (4 KV heads) and GQA (2), alternating over the splits, each with both masks.
    const int kv_heads = split.tp == 4 || (2 / split.tp) % split.ulysses != 0 || kv_case++ % 2 == 0 ? 4 : 2;
    for (const std::string mask : {"causal", "sliding:12"}) {
      plan::Plan base = test::training_plan(context, context / split.ulysses, Layout::Zigzag, BackwardMode::QRing,
                                            CheckpointPolicy::AttnStash, 0, 2, mask, 8, 16, split.ulysses);
      base.job.model.kv_heads = kv_heads;
      const plan::Plan plan = test::data_parallel(test::tensor_parallel(base, split.tp), split.dp, split.dp, 1);
      require_trains_like_one_rank(plan, *comm,
                                   fmt::format("tp {} x ring {} x ulysses {} x dp {}, {} KV heads, {}", split.tp,
                                               context / split.ulysses, split.ulysses, split.dp, kv_heads, mask));
    }
  }
}

TEST_CASE("tensor parallelism at every ZeRO stage and checkpoint policy trains like one rank",
          "[training][mpi][tensor_parallel]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  struct Case {
    CheckpointPolicy policy;
    Layout layout;
    int micro_batch;
  };
  const std::vector<Case> cases = {{CheckpointPolicy::Full, Layout::Zigzag, 1},
                                   {CheckpointPolicy::None, Layout::Contiguous, 2},
                                   {CheckpointPolicy::SeqStash, Layout::Striped, 1}};
  for (const int stage : {0, 1, 2, 3}) {
    const Case& c = cases[static_cast<std::size_t>(stage) % cases.size()];
    const int context = world / 4;  // tp 2 x dp 2
    plan::Plan base = test::training_plan(context, context, c.layout, BackwardMode::KvRing, c.policy,
                                          c.policy == CheckpointPolicy::SeqStash ? 0.5 : 0, 1);
    base.strategy.zero.stage = stage;
    const plan::Plan plan =
        test::data_parallel(test::tensor_parallel(base, 2), 2, 2 * c.micro_batch * 2, c.micro_batch);
    require_trains_like_one_rank(plan, *comm,
                                 fmt::format("tp 2 x dp 2, ZeRO {}, {} on {}, micro-batches of {}", stage,
                                             to_string(c.policy), to_string(c.layout), c.micro_batch));
  }
}

TEST_CASE("each rank sends the simulator's bytes in the sequence-parallel collectives",
          "[training][mpi][tensor_parallel]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  for (const int tp : {2, 4}) {
    for (const int micro_batch : {1, 2}) {
      const int context = world / tp;
      for (const CheckpointPolicy policy : {CheckpointPolicy::None, CheckpointPolicy::Full}) {
        plan::Plan base = test::training_plan(context, context, Layout::Zigzag, BackwardMode::QRing, policy, 0, 1);
        base.job.model.kv_heads = 4;  // whole KV heads on every tensor-parallel rank
        // Two micro-batches a step, each of micro_batch sequences side by side.
        const plan::Plan plan = test::data_parallel(test::tensor_parallel(base, tp), 1, 2 * micro_batch, micro_batch);
        rt::TrainingRun run(plan, *comm, test::training_options(1, false));
        const std::optional<rt::TrainingReport> report = run.run();
        if (comm->rank() != 0) continue;
        REQUIRE(report);
        // The CPU step's activations are fp32; a context-parallel rank's tokens of a micro-batch.
        sim::TrainingJob job;
        job.model = plan.job.model;
        job.dtype_bytes = 4;
        const double tokens = static_cast<double>(plan.job.seq * micro_batch / context);
        const sim::TensorParallelBytes layer = sim::tensor_parallel_bytes(job, tp, tokens);
        // A recompute repeats 3 of the forward's 4 (the layer's output, the next layer's kept
        // input, is not recomputed); the simulator prices Megatron's full-layer recompute, all 4.
        const double recompute = policy == CheckpointPolicy::None ? 0.0 : 0.75;
        const double expected =
            2.0 * plan.job.model.layers * ((1 + recompute) * layer.forward_per_layer() + layer.backward_per_layer());
        INFO("tp " << tp << ", micro-batches of " << micro_batch << ", " << to_string(policy));
        CHECK(static_cast<double>(report->measured.sequence_parallel_bytes) == expected);
      }
    }
  }
}

TEST_CASE("a tensor-parallel plan the runtime cannot run is refused by pointer", "[training][mpi][tensor_parallel]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  const plan::Plan base =
      test::training_plan(world / 2, world / 2, Layout::Zigzag, BackwardMode::QRing, CheckpointPolicy::None, 0, 1);
  SECTION("a degree that does not divide the KV heads") {
    plan::Plan plan = test::tensor_parallel(
        test::training_plan(world / 4, world / 4, Layout::Zigzag, BackwardMode::QRing, CheckpointPolicy::None, 0, 1),
        4);
    plan.job.model.kv_heads = 2;
    CHECK_THROWS_WITH(rt::TrainingRun(plan, *comm, test::training_options(1, false)),
                      Catch::Contains("plan:/strategy/tp") && Catch::Contains("does not divide"));
  }
  SECTION("a tensor-parallel group whose ranks hold different tokens") {
    plan::Plan plan = test::tensor_parallel(base, 2);
    for (plan::Ring& ring : plan.rings) {
      if (ring.tp == 1) std::reverse(ring.order.begin(), ring.order.end());
    }
    CHECK_THROWS_WITH(rt::TrainingRun(plan, *comm, test::training_options(1, false)),
                      Catch::Contains("plan:/rings (tensor-parallel rank 1") &&
                          Catch::Contains("where tensor-parallel rank 0 has world rank"));
  }
  SECTION("a tensor-parallel rank's ring holding another rank's heads") {
    plan::Plan plan = test::tensor_parallel(base, 2);
    for (plan::Ring& ring : plan.rings) {
      if (ring.tp == 1) ring.order.front() = 0;
    }
    CHECK_THROWS_WITH(rt::TrainingRun(plan, *comm, test::training_options(1, false)),
                      Catch::Contains("plan:/rings") && Catch::Contains("tensor-parallel rank 1"));
  }
}

TEST_CASE("a tensor-parallel run saves the whole model, and resumes from it, tensor-parallel or not",
          "[training][mpi][tensor_parallel]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  // tp 2 x ring world / 2 at ZeRO 2, and the same sequence on a ring of every rank.
  plan::Plan base =
      test::training_plan(world / 2, world / 2, Layout::Zigzag, BackwardMode::QRing, CheckpointPolicy::AttnStash, 0, 2);
  base.strategy.zero.stage = 2;
  const plan::Plan tensor_parallel = test::tensor_parallel(base, 2);
  const plan::Plan ring = test::training_plan(world, world, Layout::Zigzag, BackwardMode::QRing,
                                              CheckpointPolicy::AttnStash, 0, 2, "causal", 8, 8);
  REQUIRE(ring.job.seq == tensor_parallel.job.seq);
  const std::string state =
      (std::filesystem::temp_directory_path() / fmt::format("burst-tp-test-np{}.state", world)).string();
  const auto losses = [&](const plan::Plan& plan, const rt::TrainingOptions& options) {
    rt::TrainingRun run(plan, *comm, options);
    const std::optional<rt::TrainingReport> report = run.run();
    std::vector<double> out;
    if (report) {
      for (const auto& step : report->steps) out.push_back(step.loss);
    }
    return out;
  };
  const std::vector<double> straight = losses(tensor_parallel, test::training_options(4, false));
  rt::TrainingOptions first = test::training_options(2, false);
  first.save = state;
  const std::vector<double> saved = losses(tensor_parallel, first);
  rt::TrainingOptions second = test::training_options(2, false);
  second.resume = state;
  const std::vector<double> resumed = losses(tensor_parallel, second);
  const std::vector<double> on_a_ring = losses(ring, second);
  if (comm->rank() == 0) {
    REQUIRE(straight.size() == 4);
    REQUIRE(resumed.size() == 2);
    // The same layout continues the curve bit for bit; another layout within rounding.
    CHECK(saved[1] == straight[1]);
    CHECK(resumed[0] == straight[2]);
    CHECK(resumed[1] == straight[3]);
    CHECK(on_a_ring[0] == Approx(straight[2]).epsilon(1e-4));
    CHECK(on_a_ring[1] == Approx(straight[3]).epsilon(1e-4));
  }
  comm->barrier();
  if (comm->rank() == 0) test::remove_saved_state(state);
}
