// The whole training step on one GPU (CudaStepKernels and CudaAttentionKernels under the same
// TrainingStep the CPU runs) against the CPU step (fp32 but for the plan's bf16 attention inputs)
// on the same plan, weights and tokens:
// every checkpoint policy, the LM head whole and in chunks. The loss within 1e-2 and every
// weight gradient within 5e-2 of the tensor's largest (TrainingOptions::bf16_step_tolerance, the
// tolerance of `burst run --device cuda --check`); and with deterministic kernels, two runs give
// the same gradients bit for bit. The bf16-storage emulation of this step on the CPU
// (tests/train/step_data_flow_test.cpp) stays within about 1e-2. And the CUDA backend's traffic
// counters (device_traffic.hpp) over warm steps of a whole run with its state in GPU memory: no
// device-wide synchronisation, no allocation from the driver, and nothing brought to the host
// but the loss terms and the gradient norm.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "runtime/comm/loopback_communicator.hpp"
#include "runtime/cuda/cuda_attention_kernels.hpp"
#include "runtime/cuda/cuda_step_kernels.hpp"
#include "runtime/training/detail/relative_error.hpp"
#include "runtime/training/train_step.hpp"
#include "runtime/training/training_run.hpp"
#include "runtime/device/device.hpp"
#include "tests/support/random_tokens.hpp"
#include "tests/support/ring_plan.hpp"

using namespace burst;
using namespace burst::rt;

namespace {

struct Step {
  double loss = 0;
  std::vector<float> grads;
};

// One step of `plan` on one rank; backend empty: the CPU's.
Step run(const plan::Plan& plan, const StepBackend& backend) {
  const ModelLayout model(plan.job.model);
  const test::RandomTokens in = test::random_tokens(plan.job.seq, 3, 9, 4);
  const auto comm = make_self_communicator();
  MemoryLedger ledger;
  TrainingStep step(plan, model, plan.job.seq, *comm, ledger, backend);
  const std::vector<float> params = initial_params(model, 5);
  Step out;
  out.grads.assign(model.size(), 0.0f);
  const StepOutcome o = step.run(params, out.grads, {in.tokens, in.targets, in.counted});
  out.loss = o.loss_sum / static_cast<double>(in.counted);
  return out;
}

// A bf16 plan (the CUDA attention's inputs) with head dim 64 (one it has kernels for).
plan::Plan gpu_plan(CheckpointPolicy policy, Layout layout, int chunks) {
  plan::Plan p = test::training_plan(1, 1, layout, BackwardMode::QRing, policy, 0.5, chunks, "causal", 64, 96);
  p.job.dtype = "bf16";
  p.strategy.zero.stage = 0;
  return p;
}

}  // namespace

TEST_CASE("the GPU training step matches the CPU's fp32 step under every policy") {
  const auto [policy, layout] = GENERATE(std::pair{CheckpointPolicy::None, Layout::Contiguous},
                                         std::pair{CheckpointPolicy::Full, Layout::Contiguous},
                                         std::pair{CheckpointPolicy::AttnStash, Layout::Contiguous},
                                         std::pair{CheckpointPolicy::SeqStash, Layout::Striped});
  const int chunks = GENERATE(1, 3);
  CAPTURE(to_string(policy), chunks);
  const plan::Plan plan = gpu_plan(policy, layout, chunks);
  CudaStepKernels step_kernels;
  CudaAttentionKernels attention_kernels({}, step_kernels.stream(),
                                         step_kernels.memory());  // the step's stream and pool
  StepBackend gpu;
  gpu.step = &step_kernels;
  gpu.attention = &attention_kernels;
  const Step want = run(plan, {});
  const Step got = run(plan, gpu);
  CHECK(std::fabs(got.loss - want.loss) <= 1e-2 * std::fabs(want.loss));
  const ModelLayout model(plan.job.model);
  for (const auto& [name, slice] : model.named()) {
    const double e =
        relative_error(slice.of(std::span<const float>(got.grads)), slice.of(std::span<const float>(want.grads)));
    INFO(name << ": relative error " << e);
    CHECK(e <= 5e-2);
  }
}

TEST_CASE("with deterministic kernels the GPU step repeats bit for bit") {
  const plan::Plan plan = gpu_plan(CheckpointPolicy::Full, Layout::Contiguous, 3);
  CudaStepKernels step_kernels;
  CudaKernelOptions options;
  options.deterministic = true;
  CudaAttentionKernels attention_kernels(options, step_kernels.stream(), step_kernels.memory());
  StepBackend gpu;
  gpu.step = &step_kernels;
  gpu.attention = &attention_kernels;
  const Step first = run(plan, gpu);
  const Step second = run(plan, gpu);
  CHECK(first.loss == second.loss);
  CHECK(std::memcmp(first.grads.data(), second.grads.data(), first.grads.size() * sizeof(float)) == 0);
}

TEST_CASE(
    "a warm GPU training step with its state in GPU memory synchronises nothing and brings back only the loss and "
    "norm") {
  plan::Plan plan = gpu_plan(CheckpointPolicy::AttnStash, Layout::Contiguous, 1);
  plan.strategy.zero.offload = false;
  const auto comm = make_self_communicator();
  CudaStepKernels step_kernels;
  CudaKernelOptions attention_options;
  attention_options.device_times = false;  // as burst run makes them (make_step_attention_kernels)
  CudaAttentionKernels attention_kernels(attention_options, step_kernels.stream(), step_kernels.memory());
  TrainingOptions options;
  options.steps = 4;
  options.data = BURST_TEST_DATA "/corpus";
  options.backend.step = &step_kernels;
  options.backend.attention = &attention_kernels;
  options.device_collectives = [&](Communicator& group, std::span<const int>) {
    return make_device_collectives(group, step_kernels);
  };
  TrainingRun run(plan, *comm, options);
  const std::optional<TrainingReport> report = run.run();
  REQUIRE(report);
  REQUIRE(report->device_traffic.later_steps_max);
  const DeviceTraffic& later = *report->device_traffic.later_steps_max;
  INFO(report->to_json()["device_traffic"].dump());
  CHECK(later.device_synchronizations == 0);
  CHECK(later.driver_allocations == 0);
  // One wait for the loss, one for the gradient norm, one for the step's timers (the staging
  // slots of the token uploads and the tile lists never make a warm step wait).
  CHECK(later.host_waits <= 3);
  // The tile lists are uploaded once per block pair; a warm step sends its token ids and targets only.
  CHECK(later.host_to_device_bytes <= 3 * sizeof(std::int64_t) * static_cast<std::uint64_t>(plan.job.seq) + 64);
  // The loss terms (a double per row of each LM-head chunk) and the squared gradient norm.
  CHECK(later.device_to_host_bytes <= sizeof(double) * (static_cast<std::uint64_t>(plan.job.seq) + 1));
}
