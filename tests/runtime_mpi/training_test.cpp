// The training runtime on every rank of the job, against the single-rank step (TrainingRun's
// --check: the first step's loss and every weight gradient within 1e-3 relative): every
// checkpoint policy x backward mode x layout, several masks, a double ring, a chunked LM head;
// then the memory each policy and the chunking hold, determinism and save/resume.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "runtime/comm/mpi_communicator.hpp"
#include "runtime/training/training_run.hpp"
#include "tests/support/ring_plan.hpp"

using namespace burst;

namespace {

using test::training_plan;

rt::TrainingOptions options(int steps, bool check) {
  rt::TrainingOptions o;
  o.steps = steps;
  o.check = check;
  o.data = BURST_TEST_DATA "/corpus";
  return o;
}

Json train(const plan::Plan& plan, rt::Communicator& comm, const rt::TrainingOptions& o) {
  rt::TrainingRun run(plan, comm, o);
  return run.run();
}

// On rank 0: the check passed, with its figures in the failure message.
void require_check(const Json& report, const std::string& what) {
  INFO(what << ": " << report["check"].dump());
  CHECK(report["check"]["max_rel_err_grad"].get<double>() < 1e-3);
  CHECK(report["check"]["loss_rel_err"].get<double>() < 1e-3);
  CHECK(report["check"]["passed"].get<bool>());
}

std::uint64_t peak(const Json& report) { return report["peak_memory_bytes"].get<std::uint64_t>(); }

}  // namespace

TEST_CASE("a training step on every rank matches the single-rank step for every policy, backward and layout",
          "[training][mpi]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  struct Policy {
    CheckpointPolicy policy;
    double kept;
  };
  for (const Layout layout : {Layout::Contiguous, Layout::Zigzag, Layout::Striped}) {
    std::vector<Policy> policies = {{CheckpointPolicy::None, 0}, {CheckpointPolicy::Full, 0}, {CheckpointPolicy::AttnStash, 0}};
    if (layout == Layout::Striped) policies.insert(policies.end(), {{CheckpointPolicy::SeqStash, 0.5}, {CheckpointPolicy::SeqStash, 0.3}});
    for (const Policy& p : policies) {
      for (const BackwardMode backward : {BackwardMode::KvRing, BackwardMode::QRing}) {
        const plan::Plan plan = training_plan(world, world, layout, backward, p.policy, p.kept, 3);
        const Json report = train(plan, *comm, options(1, true));
        if (comm->rank() == 0) {
          require_check(report, fmt::format("{} ranks, {}, {} {}, {}", world, to_string(layout), to_string(p.policy), p.kept,
                                            to_string(backward)));
        }
      }
    }
  }
}

TEST_CASE("masks that look back only, and a double ring, train like one rank", "[training][mpi]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  for (const std::string mask : {"document:16", "sliding:12", "full"}) {
    const auto policy = mask == "full" ? CheckpointPolicy::Full : CheckpointPolicy::SeqStash;
    const plan::Plan plan = training_plan(world, world, Layout::Striped, BackwardMode::QRing, policy, 0.5, 2, mask);
    const Json report = train(plan, *comm, options(1, true));
    if (comm->rank() == 0) require_check(report, mask);
  }
  if (world % 2 == 0 && world > 2) {
    const plan::Plan plan = training_plan(world, 2, Layout::Zigzag, BackwardMode::QRing, CheckpointPolicy::Full, 0, 1);
    const Json report = train(plan, *comm, options(1, true));
    if (comm->rank() == 0) require_check(report, "double ring");
  }
}

TEST_CASE("Ulysses groups, alone or around a ring, train like one rank", "[training][mpi]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  // ds-ulysses (the whole world one group) when the 2 KV heads split that far; groups of 2 around
  // a ring (burst-usp) otherwise.
  const int ulysses = 2, inner = world / ulysses;
  for (const CheckpointPolicy policy : {CheckpointPolicy::None, CheckpointPolicy::Full, CheckpointPolicy::AttnStash}) {
    for (const BackwardMode backward : {BackwardMode::KvRing, BackwardMode::QRing}) {
      const plan::Plan plan =
          training_plan(world, inner, Layout::Zigzag, backward, policy, 0, 2, "causal", 8, 16, ulysses);
      const Json report = train(plan, *comm, options(1, true));
      if (comm->rank() == 0) require_check(report, fmt::format("ulysses {} x ring {}, {}, {}", ulysses, inner,
                                                                to_string(policy), to_string(backward)));
    }
  }
  // seq_stash's short ring needs a rank's first rows to be the sequence's first tokens: refused.
  const plan::Plan stash = training_plan(world, inner, Layout::Striped, BackwardMode::QRing, CheckpointPolicy::SeqStash,
                                         0.5, 1, "causal", 8, 16, ulysses);
  CHECK_THROWS_WITH(train(stash, *comm, options(1, false)),
                    Catch::Contains("plan:/strategy/checkpoint/policy: seq_stash with Ulysses degree 2"));
}

TEST_CASE("what each policy keeps, and the chunked LM head, show in the measured peak", "[training][mpi]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  const auto run = [&](CheckpointPolicy policy, double kept, int chunks) {
    return train(training_plan(world, world, Layout::Striped, BackwardMode::QRing, policy, kept, chunks), *comm,
                 options(1, false));
  };
  const Json none = run(CheckpointPolicy::None, 0, 1), stash = run(CheckpointPolicy::AttnStash, 0, 1),
             seq = run(CheckpointPolicy::SeqStash, 0.5, 1), full = run(CheckpointPolicy::Full, 0, 1),
             chunked = run(CheckpointPolicy::None, 0, 4);
  if (comm->rank() != 0) return;
  CHECK(peak(none) > peak(stash));
  CHECK(peak(stash) > peak(seq));
  CHECK(peak(seq) > peak(full));
  // The same step: the stash changes what is kept, never the numbers.
  CHECK(none["losses"][0].get<double>() == Approx(full["losses"][0].get<double>()).epsilon(1e-6));
  // 16 tokens per rank in 4 chunks: the loss workspace is a quarter of the whole logits.
  const auto workspace = [](const Json& r) { return r["memory"]["peak_by_use"]["lm_head"].get<std::uint64_t>(); };
  CHECK(workspace(chunked) * 4 == workspace(none));
  CHECK(peak(chunked) < peak(none));
  CHECK(chunked["losses"][0].get<double>() == Approx(none["losses"][0].get<double>()).epsilon(1e-6));
}

TEST_CASE("the loss falls, the same seed gives the same losses, and a resumed run continues the curve", "[training][mpi]") {
  auto comm = rt::make_mpi_communicator({});
  const plan::Plan plan =
      training_plan(comm->size(), comm->size(), Layout::Zigzag, BackwardMode::QRing, CheckpointPolicy::AttnStash, 0, 2);
  const std::string state =
      (std::filesystem::temp_directory_path() / fmt::format("burst-training-test-np{}.state", comm->size())).string();
  const Json straight = train(plan, *comm, options(8, false));
  rt::TrainingOptions first = options(5, false);
  first.save = state;
  const Json saved = train(plan, *comm, first);
  rt::TrainingOptions second = options(3, false);
  second.resume = state;
  const Json resumed = train(plan, *comm, second);
  if (comm->rank() == 0) {
    const Json& losses = straight["losses"];
    REQUIRE(losses.size() == 8);
    CHECK(losses[7].get<double>() < 0.9 * losses[0].get<double>());
    for (std::size_t i = 0; i < 5; ++i) CHECK(saved["losses"][i].get<double>() == losses[i].get<double>());
    CHECK(resumed["run"]["first_step"].get<int>() == 5);
    for (std::size_t i = 0; i < 3; ++i) CHECK(resumed["losses"][i].get<double>() == losses[5 + i].get<double>());
  }
  comm->barrier();
  if (comm->rank() == 0) std::filesystem::remove(state);
}

TEST_CASE("a state of another model or run, a bad data path or an unwritable --save fails on every rank before any message", "[training][mpi]") {
  auto comm = rt::make_mpi_communicator({});
  const int world = comm->size();
  const std::string state =
      (std::filesystem::temp_directory_path() / fmt::format("burst-training-test-other-np{}.state", world)).string();
  plan::Plan plan = training_plan(world, world, Layout::Zigzag, BackwardMode::QRing, CheckpointPolicy::Full, 0, 1);
  rt::TrainingOptions save = options(1, false);
  save.save = state;
  (void)train(plan, *comm, save);
  plan.job.model.hidden = 40;
  rt::TrainingOptions resume = options(1, false);
  resume.resume = state;
  CHECK_THROWS_WITH(rt::TrainingRun(plan, *comm, resume),
                    Catch::Contains(state + ": the saved run has hidden 32, this run has 40"));
  plan.job.model.hidden = 32;
  resume.adamw.lr = 0.01f;
  CHECK_THROWS_WITH(rt::TrainingRun(plan, *comm, resume), Catch::Contains(state + ": the saved run has lr"));
  rt::TrainingOptions into_directory = options(1, false);
  into_directory.save = std::filesystem::temp_directory_path().string();
  CHECK_THROWS_WITH(rt::TrainingRun(plan, *comm, into_directory), Catch::Contains("--save: " + into_directory.save + ": is a directory"));
  rt::TrainingOptions missing = options(1, false);
  missing.data = "/nonexistent/corpus";
  CHECK_THROWS_WITH(rt::TrainingRun(plan, *comm, missing), Catch::Contains("/nonexistent/corpus"));
  plan.strategy.checkpoint = CheckpointPolicy::SeqStash;
  plan.strategy.kept_fraction = 0.5;
  CHECK_THROWS_WITH(rt::TrainingRun(plan, *comm, options(1, false)),
                    Catch::Contains("plan:/strategy/layout: seq_stash runs on the striped layout only, this plan is zigzag"));
  comm->barrier();
  if (comm->rank() == 0) std::filesystem::remove(state);
}
