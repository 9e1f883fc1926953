// What a training step moves between host and device once it is warm, counted (device_traffic.hpp)
// on the CPU: whole training runs of loopback jobs whose ranks compute on Bf16StepKernels (the
// GPU step's data flow in memory that calls itself device memory and counts what crosses it,
// tests/support/bf16_step_kernels.hpp), with every ring and ZeRO collective on transports that
// refuse host buffers, as NCCL does. With the model state in device memory, after the first step
// (which fills the memory pools) a step must move nothing to or from the host, wait for nothing
// and take no memory from "the driver": the attention's inputs, outputs, ring blocks and Ulysses
// exchanges all stay in the step's memory. The stand-in's loss and gradient norm are computed on
// the host side of the emulation, so here even those read zero; on a GPU they are the only bytes a
// step brings back (burst_training_step_gpu_tests checks the CUDA backend's counters).
#include <catch2/catch.hpp>

#include <string>

#include "runtime/training/training_run.hpp"
#include "tests/support/device_job.hpp"
#include "tests/support/ring_plan.hpp"
#include "tests/support/training_options.hpp"

using namespace burst;

namespace {

plan::Plan device_plan(int world, int inner, int ulysses, Layout layout, BackwardMode backward, CheckpointPolicy policy,
                       int zero_stage, double kept = 0) {
  plan::Plan p = test::training_plan(world, inner, layout, backward, policy, kept, 2, "causal", 8, 16, ulysses);
  p.job.dtype = "bf16";
  p.strategy.zero.stage = zero_stage;
  p.strategy.zero.offload = false;
  return p;
}

void require_nothing_crossed(const std::optional<rt::DeviceTraffic>& traffic) {
  REQUIRE(traffic);
  INFO(rt::to_json(*traffic).dump());
  CHECK(traffic->host_to_device_bytes == 0);
  CHECK(traffic->device_to_host_bytes == 0);
  CHECK(traffic->host_waits == 0);
  CHECK(traffic->device_synchronizations == 0);
  CHECK(traffic->driver_allocations == 0);
}

}  // namespace

TEST_CASE("a warm training step with its state in device memory moves nothing to or from the host",
          "[training][device_traffic]") {
  struct Case {
    std::string name;
    plan::Plan plan;
  };
  const std::vector<Case> cases{
      {"ring, query-side backward, attn_stash, ZeRO 0",
       device_plan(2, 2, 1, Layout::Zigzag, BackwardMode::QRing, CheckpointPolicy::AttnStash, 0)},
      {"ring, K,V-ring backward, no checkpointing, ZeRO 3",
       device_plan(2, 2, 1, Layout::Zigzag, BackwardMode::KvRing, CheckpointPolicy::None, 3)},
      {"seq_stash's short ring, ZeRO 2",
       device_plan(2, 2, 1, Layout::Striped, BackwardMode::QRing, CheckpointPolicy::SeqStash, 2, 0.5)},
      {"Ulysses of 2 (ds-ulysses), full recompute, ZeRO 1",
       device_plan(2, 1, 2, Layout::Zigzag, BackwardMode::QRing, CheckpointPolicy::Full, 1)},
      {"Ulysses of 2 around rings of 2 (burst-usp)",
       device_plan(4, 2, 2, Layout::Zigzag, BackwardMode::QRing, CheckpointPolicy::AttnStash, 0)},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const rt::TrainingReport report = test::run_device_job(c.plan, test::training_options(3, false), true);
    // The first step fills the pools (and, were the state on the host, would upload it).
    CHECK(report.device_traffic.first_step.driver_allocations > 0);
    require_nothing_crossed(report.device_traffic.later_steps_max);
    REQUIRE(report.steps.size() == 3);
    CHECK(report.steps[2].loss < report.steps[0].loss);
  }
}

TEST_CASE("the counters see an offloaded state's uploads and gradients on every step", "[training][device_traffic]") {
  plan::Plan plan = device_plan(2, 2, 1, Layout::Zigzag, BackwardMode::QRing, CheckpointPolicy::AttnStash, 0);
  plan.strategy.zero.offload = true;
  const rt::TrainingReport report = test::run_device_job(plan, test::training_options(3, false), true);
  REQUIRE(report.device_traffic.later_steps_max);
  const rt::DeviceTraffic& later = *report.device_traffic.later_steps_max;
  INFO(rt::to_json(later).dump());
  // Each unit goes up as bf16 and its fp32 gradients come back, every step (two ranks, one process).
  CHECK(later.host_to_device_bytes >= 2 * report.run.parameters);
  CHECK(later.device_to_host_bytes >= 4 * report.run.parameters);
}
