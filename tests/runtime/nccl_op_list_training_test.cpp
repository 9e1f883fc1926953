// The training step's rings over the NCCL op lists. Every rank of a plan runs a whole training
// step (each layer's forward, the checkpoint policy's recompute, seq_stash's short ring among
// them, and each layer's backward) as a thread, each ring over its own RecordingCommunicator
// built from that ring's op lists, as `burst run --device cuda` over several processes gives
// each ring an NCCL transport (StepBackend::ring_transport). Every transfer is in its list, no
// wait is on a group NCCL would not have issued, and every pass's groups were all issued: the
// step's many passes follow the lists one pass at a time.
#include <catch2/catch.hpp>

#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "runtime/comm/loopback_communicator.hpp"
#include "runtime/training/train_step.hpp"
#include "tests/support/recording_communicator.hpp"
#include "tests/support/ring_plan.hpp"

using namespace burst;
using namespace burst::rt;

namespace {

// The rings of a job: per sequence length (a ring schedule), its op lists and the hub its ranks share.
class RecordedRings {
 public:
  explicit RecordedRings(const plan::Plan& plan) : plan_(plan) {}

  // Rank `rank`'s transport for the ring of `seq` tokens; every one made is kept for the checks.
  std::unique_ptr<Communicator> make(int rank, std::int64_t seq) {
    const std::lock_guard lock(mutex_);
    Ring& ring = rings_[seq];
    if (!ring.lists) {
      ring.lists = std::make_unique<NcclOpLists>(plan_, seq);
      ring.hub = make_loopback_hub(static_cast<int>(plan_.ranks.size()));
    }
    auto comm = std::make_unique<test::RecordingCommunicator>(ring.hub, rank, *ring.lists);
    made_.push_back(comm.get());
    return comm;
  }
  [[nodiscard]] std::size_t rings() const { return rings_.size(); }
  [[nodiscard]] const std::vector<test::RecordingCommunicator*>& made() const { return made_; }

 private:
  struct Ring {
    std::unique_ptr<NcclOpLists> lists;
    std::shared_ptr<LoopbackHub> hub;
  };
  const plan::Plan& plan_;
  std::mutex mutex_;
  std::map<std::int64_t, Ring> rings_;
  std::vector<test::RecordingCommunicator*> made_;
};

// Every rank runs one training step; returns the number of rings the step used.
std::size_t run_step_on_recorded_rings(const plan::Plan& plan) {
  const int world = static_cast<int>(plan.ranks.size());
  const ModelLayout model(plan.job.model);
  const std::vector<float> params = initial_params(model, 4);
  RecordedRings rings(plan);
  const auto job = make_loopback_communicators(world, CommOptions{10});
  std::vector<std::string> failures(static_cast<std::size_t>(world));
  // The steps own their rings' communicators: they outlive the threads, for the checks.
  std::vector<MemoryLedger> ledgers(static_cast<std::size_t>(world));
  std::vector<std::unique_ptr<TrainingStep>> steps(static_cast<std::size_t>(world));
  std::vector<std::thread> threads;
  for (int w = 0; w < world; ++w) {
    threads.emplace_back([&, w] {
      try {
        StepBackend backend;
        backend.ring_transport = [&, w](std::int64_t seq) { return rings.make(w, seq); };
        const auto i = static_cast<std::size_t>(w);
        steps[i] = std::make_unique<TrainingStep>(plan, model, plan.job.seq, *job[i], ledgers[i], backend);
        TrainingStep& step = *steps[i];
        std::vector<std::int32_t> tokens, targets;
        for (const std::int64_t p : step.positions()) {
          tokens.push_back(static_cast<std::int32_t>((p * 37) % 256));
          targets.push_back(static_cast<std::int32_t>((p * 11 + 3) % 256));
        }
        std::vector<float> grads(model.size());
        (void)step.run(params, grads, {tokens, targets, plan.job.seq});
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(w)] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int w = 0; w < world; ++w) {
    INFO("rank " << w);
    CHECK(failures[static_cast<std::size_t>(w)] == "");
  }
  for (const test::RecordingCommunicator* ring : rings.made()) {
    INFO("rank " << ring->rank());
    CHECK(ring->early_waits() == std::vector<std::string>{});  // every wait is on an issued group
    CHECK(ring->last_pass_issued());                           // and every group was issued
    CHECK(!ring->posted().empty());
  }
  CHECK(rings.made().size() == rings.rings() * static_cast<std::size_t>(world));
  return rings.rings();
}

}  // namespace

TEST_CASE("a training step's passes follow each ring's NCCL op lists", "[nccl][training]") {
  SECTION("flat ring of 2, every activation kept") {
    const plan::Plan p = test::training_plan(2, 2, Layout::Zigzag, BackwardMode::QRing, CheckpointPolicy::None, 0.5, 1);
    CHECK(run_step_on_recorded_rings(p) == 1);
  }
  SECTION("double ring 2 x 2, full recompute, the key-value backward") {
    const plan::Plan p =
        test::training_plan(4, 2, Layout::Contiguous, BackwardMode::KvRing, CheckpointPolicy::Full, 0.5, 2);
    CHECK(run_step_on_recorded_rings(p) == 1);
  }
  SECTION("seq_stash: the recompute's short ring has lists of its own") {
    const plan::Plan p =
        test::training_plan(2, 2, Layout::Striped, BackwardMode::QRing, CheckpointPolicy::SeqStash, 0.5, 3);
    CHECK(run_step_on_recorded_rings(p) == 2);
  }
  SECTION("Ulysses groups of 2 around a ring of 2, attention stash") {
    const plan::Plan p = test::training_plan(4, 2, Layout::Striped, BackwardMode::QRing, CheckpointPolicy::AttnStash,
                                             0.5, 1, "causal", 8, 16, 2);
    CHECK(run_step_on_recorded_rings(p) == 1);
  }
}
