// Tensor parallelism on the GPU step's data flow, on the CPU: whole training runs of loopback jobs
// whose ranks compute on Bf16StepKernels (tests/support/bf16_step_kernels.hpp: bf16 activations
// in memory that calls itself device memory) with every collective on transports that refuse a
// host buffer, as NCCL does (tests/support/device_job.hpp): the sequence-parallel all-gathers and
// reduce-scatters of bf16 activations over each tensor-parallel group's own device transport, the
// ZeRO collectives over each sharding group's, the rings over theirs.
//
// What must hold, for tensor x context x data-parallel splits of 4 ranks:
// - the first step's loss, gradients and gradient norm against the whole global batch on one CPU
//   rank in fp32 (--check, under the bf16 step's tolerance);
// - with the model state in device memory, a warm step moves nothing between host and device,
//   waits for nothing and allocates nothing: the tensor-parallel collectives stay on the device;
// - the state in device memory trains as the offloaded state does, bit for bit (the same fp32
//   master weights rounded to the same bf16, the same gradient sums in the same order), so the
//   device group's gradient sums are the host group's;
// - a device step whose tensor-parallel group can only read host memory is refused by name.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime/training/training_run.hpp"
#include "tests/support/device_job.hpp"
#include "tests/support/ring_plan.hpp"
#include "tests/support/training_options.hpp"

using namespace burst;

namespace {

constexpr int kTpWorld = 4;

struct TpSplit {
  int tp, dp, ulysses;  // the ring is what is left: kTpWorld / (tp dp ulysses)
  int kv_heads;         // of 4 heads: 2 (GQA) where tp x ulysses divides them, else 4 (MHA)
  int zero_stage;
  std::string mask;
};

std::string describe_split(const TpSplit& s) {
  return fmt::format("tp {} x ring {} x ulysses {} x dp {}, {} KV heads, ZeRO {}, {}", s.tp,
                     kTpWorld / (s.tp * s.dp * s.ulysses), s.ulysses, s.dp, s.kv_heads, s.zero_stage, s.mask);
}

plan::Plan tp_device_plan(const TpSplit& s, bool offload) {
  const int context = kTpWorld / (s.tp * s.dp);
  plan::Plan base = test::training_plan(context, context / s.ulysses, Layout::Zigzag, BackwardMode::QRing,
                                        CheckpointPolicy::AttnStash, 0, 2, s.mask, 8, 16, s.ulysses);
  base.job.model.kv_heads = s.kv_heads;
  base.job.dtype = "bf16";
  base.strategy.zero.stage = s.zero_stage;
  base.strategy.zero.offload = offload;
  return test::data_parallel(test::tensor_parallel(base, s.tp), s.dp, 2 * s.dp, 1);
}

const std::vector<TpSplit> kTpSplits{
    {2, 1, 1, 2, 0, "causal"},      // tp 2 inside a ring of 2
    {2, 2, 1, 2, 1, "sliding:12"},  // tp 2 x dp 2, one rank a replica's context
    {2, 1, 2, 4, 3, "causal"},      // tp 2 x Ulysses 2, every unit gathered on use
    {4, 1, 1, 4, 2, "causal"},      // the whole job one tensor-parallel group
};

}  // namespace

TEST_CASE("tensor-parallel plans train on the device step like one rank, every collective in device memory",
          "[training][tensor_parallel][device_traffic]") {
  for (const TpSplit& split : kTpSplits) {
    INFO(describe_split(split));
    const rt::TrainingReport resident =
        test::run_device_job(tp_device_plan(split, false), test::training_options(3, true), true);
    const Json json = resident.to_json();
    INFO(json["check"].dump());
    CHECK(json["check"]["passed"].get<bool>());
    CHECK(json["plan"]["tp"] == split.tp);
    REQUIRE(resident.steps.size() == 3);
    CHECK(resident.steps[2].loss < resident.steps[0].loss);
    CHECK(resident.measured.sequence_parallel_bytes > 0);
    REQUIRE(resident.device_traffic.later_steps_max);
    const rt::DeviceTraffic& later = *resident.device_traffic.later_steps_max;
    INFO(rt::to_json(later).dump());
    CHECK(later.host_to_device_bytes == 0);
    CHECK(later.device_to_host_bytes == 0);
    CHECK(later.host_waits == 0);
    CHECK(later.device_synchronizations == 0);
    CHECK(later.driver_allocations == 0);
    // The offloaded state: its tensor-parallel gradient sums on the host group, the step's still on the device.
    const Json offloaded =
        test::run_device_job(tp_device_plan(split, true), test::training_options(3, false)).to_json();
    CHECK(offloaded["losses"] == json["losses"]);
    CHECK(offloaded["grad_norms"] == json["grad_norms"]);
  }
}

TEST_CASE("a device step whose tensor-parallel group reads host memory only is refused by name",
          "[training][tensor_parallel]") {
  const test::DeviceJobOutcome outcome =
      test::device_job(tp_device_plan(kTpSplits.front(), true), test::training_options(1, false), {false, false});
  for (const std::string& error : outcome.errors) {
    INFO(error);
    CHECK(error.find("the sequence-parallel collectives") != std::string::npos);
    CHECK(error.find("reads host memory only") != std::string::npos);
  }
}
