// The model state in the step's device memory (zero_model.hpp), on the CPU: whole training runs
// of a 2-rank loopback job whose ranks compute on Bf16StepKernels (tests/support/
// bf16_step_kernels.hpp: what the GPU step stores, as it stores it, in memory that calls itself
// device memory). A plan that does not offload keeps its parameters there as a bf16 working
// copy beside fp32 master weights, gradients and AdamW, and ZeRO's collectives run on that
// memory through a transport that refuses host buffers, as NCCL does; a plan that offloads keeps all of it on the host
// and the step uploads each unit. Both round the same fp32 master weights to the same bf16 values and sum the same fp32
// gradients in the same order, so their losses must agree bit for bit at every stage: that pins the resident layout's
// sharding, working copies, master pieces and gathers to the layout the CPU tests check against the single-rank step.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/comm/loopback_communicator.hpp"
#include "runtime/training/shard_map.hpp"
#include "runtime/training/detail/state_shards.hpp"
#include "runtime/training/training_run.hpp"
#include "runtime/training/zero_model.hpp"
#include "tests/support/bf16_step_kernels.hpp"
#include "tests/support/device_job.hpp"
#include "tests/support/ring_plan.hpp"
#include "tests/support/training_options.hpp"
#include "tests/support/temp_dir.hpp"

using namespace burst;

namespace {

constexpr int kWorld = 2;  // the tests' job, but for one of 3 ranks, whose units do not divide

plan::Plan zero_plan(int stage, bool offload, int world = kWorld) {
  plan::Plan p =
      test::training_plan(world, world, Layout::Zigzag, BackwardMode::QRing, CheckpointPolicy::AttnStash, 0, 2);
  p.job.dtype = "bf16";
  p.strategy.zero.stage = stage;
  p.strategy.zero.offload = offload;
  return p;
}

rt::TrainingOptions options(int steps, bool check) { return test::training_options(steps, check); }

// Rank 0's report as `burst run --json` writes it.
Json run_job(const plan::Plan& plan, const rt::TrainingOptions& o) { return test::run_device_job(plan, o).to_json(); }

std::uint64_t state_on_gpu(const Json& report, const char* use) {
  return report["memory_on_gpu"]["model_state_by_use"][use].get<std::uint64_t>();
}

}  // namespace

TEST_CASE("a model state kept in device memory trains as the offloaded one does, bit for bit, at every ZeRO stage",
          "[training][zero][device_state]") {
  const rt::ModelLayout model(zero_plan(0, false).job.model);
  const rt::ShardMap shards(model.units(), kWorld);
  const std::uint64_t n = model.size(), s = shards.shard_size();
  for (int stage = 0; stage <= 3; ++stage) {
    INFO("ZeRO stage " << stage);
    const Json resident = run_job(zero_plan(stage, false), options(3, true));
    const Json offloaded = run_job(zero_plan(stage, true), options(3, false));
    plan::Plan serial_plan = zero_plan(stage, true);
    serial_plan.strategy.overlap = false;  // ZeRO's collectives one at a time: the same numbers
    const Json serial = run_job(serial_plan, options(3, false));
    CHECK(resident["losses"] == offloaded["losses"]);
    CHECK(resident["grad_norms"] == offloaded["grad_norms"]);
    CHECK(serial["losses"] == offloaded["losses"]);
    CHECK(serial["grad_norms"] == offloaded["grad_norms"]);
    CHECK(resident["losses"][2].get<double>() < resident["losses"][0].get<double>());
    // Where the state is: bf16 working parameters (whole, or the shard at stage 3), fp32
    // gradients (the shard from stage 2), fp32 master weights beside m and v (the shard from stage 1).
    CHECK(state_on_gpu(resident, "params") == 2 * (stage >= 3 ? s : n));
    CHECK(state_on_gpu(resident, "gradients") == 4 * (stage >= 2 ? s : n));
    CHECK(state_on_gpu(resident, "optimizer") == 12 * (stage >= 1 ? s : n));
    for (const char* use : {"params", "gradients", "optimizer"}) CHECK(state_on_gpu(offloaded, use) == 0);
    CHECK(resident["zero"]["state"].get<std::string>().starts_with("GPU memory"));
    CHECK(offloaded["zero"]["state"].get<std::string>().starts_with("host memory"));
    // Stages 1-3 all-gather bf16 parameters on the device, fp32 ones from the host.
    for (std::size_t c = 0; c < resident["zero"]["collectives_per_step"].size(); ++c) {
      const Json& mine = resident["zero"]["collectives_per_step"][c];
      const Json& host = offloaded["zero"]["collectives_per_step"][c];
      const bool parameters = mine["of"].get<std::string>().find("parameters") != std::string::npos;
      CHECK(2 * mine["bytes"].get<std::uint64_t>() == (parameters ? 1 : 2) * host["bytes"].get<std::uint64_t>());
    }
    INFO(resident["check"].dump());  // the whole fp32 state gathered from the device's shards
    CHECK(resident["check"]["passed"].get<bool>());
  }
}

TEST_CASE("units that do not divide among the ranks: the padded gathers of a device-resident state, 3 ranks",
          "[training][zero][device_state]") {
  const rt::ModelLayout model(zero_plan(0, false, 3).job.model);
  const rt::ShardMap shards(model.units(), 3);
  bool padded = false;
  for (std::size_t u = 0; u < shards.unit_count(); ++u)
    padded = padded || shards.padded_size(u) != shards.unit(u).count;
  REQUIRE(padded);  // else this test would not test the padded path
  for (const int stage : {1, 3}) {
    INFO("ZeRO stage " << stage);
    const Json resident = run_job(zero_plan(stage, false, 3), options(3, false));
    const Json offloaded = run_job(zero_plan(stage, true, 3), options(3, false));
    CHECK(resident["losses"] == offloaded["losses"]);
    CHECK(resident["grad_norms"] == offloaded["grad_norms"]);
  }
}

TEST_CASE("a device-resident sharded state saves its fp32 master shards and resumes the loss curve bit for bit",
          "[training][zero][device_state]") {
  const test::TempDir dir("device-state");
  const std::string state = (dir.path / "run.state").string();
  const Json straight = run_job(zero_plan(2, false), options(4, false));
  rt::TrainingOptions first = options(2, false);
  first.save = state;
  first.save_every = 1;  // also after step 1, with the updated parameters' gathers still in flight
  (void)run_job(zero_plan(2, false), first);
  rt::TrainingOptions second = options(2, false);
  second.resume = state;
  const Json resumed = run_job(zero_plan(2, false), second);
  for (std::size_t i = 0; i < 2; ++i)
    CHECK(resumed["losses"][i].get<double>() == straight["losses"][2 + i].get<double>());
  // The same shards resumed with the state on the host: the fp32 master weights were saved, not the bf16 copy.
  const Json on_host = run_job(zero_plan(2, true), second);
  for (std::size_t i = 0; i < 2; ++i)
    CHECK(on_host["losses"][i].get<double>() == straight["losses"][2 + i].get<double>());
}

TEST_CASE("a model state in device memory is refused by a transport that reads host memory only",
          "[training][zero][device_state]") {
  const plan::Plan plan = zero_plan(0, false);
  const rt::ModelLayout model(plan.job.model);
  test::Bf16StepKernels device;
  const auto self = rt::make_self_communicator();  // the host memcpy: it cannot read device memory
  rt::MemoryLedger ledger;
  try {
    rt::ZeroModel zero(0, false, model, device, *self, *self, ledger, std::vector<float>(model.size(), 0.0f), {});
    FAIL("accepted");
  } catch (const Error& e) {
    const std::string text = e.what();
    CHECK(text.find("ZeRO collectives") != std::string::npos);
    CHECK(text.find("reads host memory only") != std::string::npos);
    CHECK(text.find("offload") != std::string::npos);
  }
  rt::HostStepKernels host;  // the same state on the host goes over it
  CHECK_NOTHROW(rt::ZeroModel(0, false, model, host, *self, *self, ledger, std::vector<float>(model.size(), 0.0f), {}));
}

TEST_CASE("data-parallel replicas with accumulated micro-batches train on the device step as offloaded, every stage",
          "[training][zero][device_state][data_parallel]") {
  // 2 replicas of 2 ranks, 4 sequences a step: 2 micro-batches of 1 each, or 1 of 2 side by side.
  // The step hands back a device copy of host gradients over what it was given, so a later
  // micro-batch's must arrive beside the sum (zero_model.hpp); the resident state adds on the device.
  for (const int micro_batch : {1, 2}) {
    for (int stage = 0; stage <= 3; ++stage) {
      if (micro_batch == 2 && stage < 3) continue;  // side by side: one stage is enough (no accumulation)
      INFO("ZeRO stage " << stage << ", micro-batches of " << micro_batch);
      const plan::Plan resident = test::data_parallel(zero_plan(stage, false), 2, 4, micro_batch);
      const plan::Plan offloaded = test::data_parallel(zero_plan(stage, true), 2, 4, micro_batch);
      const rt::TrainingReport on_device = test::run_device_job(resident, options(2, true), true);
      const Json a = on_device.to_json(), b = run_job(offloaded, options(2, false));
      CHECK(a["losses"] == b["losses"]);
      CHECK(a["grad_norms"] == b["grad_norms"]);
      CHECK(a["plan"]["micro_batches"] == 2 / micro_batch);
      INFO(a["check"].dump());  // the whole batch on one CPU rank, fp32, against the bf16 device step
      CHECK(a["check"]["passed"].get<bool>());
    }
  }
}
