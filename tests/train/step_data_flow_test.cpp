// The training step's GPU data flow on the CPU: the same TrainingStep on StepKernels that store
// what the GPU step stores, in bf16 (tests/support/bf16_step_kernels.hpp), against the fp32
// CPU step, under every checkpoint policy and with the LM head whole or in chunks. The loss and
// every weight gradient agree within bf16's rounding, and the ledger's device column counts
// exactly the bytes that step allocated for the LM head (fp32 logits and a bf16 dl).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "runtime/comm/loopback_communicator.hpp"
#include "runtime/training/detail/relative_error.hpp"
#include "runtime/training/train_step.hpp"
#include "tests/support/bf16_step_kernels.hpp"
#include "tests/support/random_tokens.hpp"
#include "tests/support/ring_plan.hpp"

using namespace burst;
using namespace burst::rt;

namespace {

struct StepResult {
  double loss = 0;
  std::vector<float> grads;
  std::uint64_t lm_head_device_peak = 0;
  std::uint64_t params_device_peak = 0, gradients_device_peak = 0;
};

StepResult run_step(const plan::Plan& plan, const ModelLayout& model, StepKernels* kernels,
                    std::uint64_t predicted_activations = 0) {
  const std::int64_t seq = plan.job.seq;
  const test::RandomTokens in = test::random_tokens(seq, 5, 7, 3);
  const auto comm = make_self_communicator();
  MemoryLedger ledger(DeviceLayout{kernels != nullptr ? 2u : 4u, false});
  if (predicted_activations > 0) ledger.set_predicted(MemoryUse::Activations, predicted_activations);
  StepBackend backend;
  backend.step = kernels;
  TrainingStep step(plan, model, seq, *comm, ledger, backend);
  const std::vector<float> params = initial_params(model, 9);
  StepResult r;
  r.grads.assign(model.size(), 0.0f);
  const StepOutcome out = step.run(params, r.grads, {in.tokens, in.targets, in.counted});
  r.loss = out.loss_sum / static_cast<double>(in.counted);
  r.lm_head_device_peak = ledger.peak(MemoryUse::LossWorkspace, Column::Device);
  r.params_device_peak = ledger.peak(MemoryUse::Params, Column::Device);
  r.gradients_device_peak = ledger.peak(MemoryUse::Gradients, Column::Device);
  return r;
}

}  // namespace

TEST_CASE("the step on bf16 storage matches the fp32 step under every policy", "[train_step][bf16]") {
  const auto [policy, layout] = GENERATE(std::pair{CheckpointPolicy::None, Layout::Contiguous},
                                         std::pair{CheckpointPolicy::Full, Layout::Contiguous},
                                         std::pair{CheckpointPolicy::AttnStash, Layout::Contiguous},
                                         std::pair{CheckpointPolicy::SeqStash, Layout::Striped});
  const int chunks = GENERATE(1, 3);
  const int stage = GENERATE(0, 3);
  CAPTURE(to_string(policy), chunks, stage);
  plan::Plan plan = test::training_plan(1, 1, layout, BackwardMode::QRing, policy, 0.5, chunks, "causal", 8, 24);
  plan.strategy.zero.stage = stage;
  const ModelLayout model(plan.job.model);
  test::Bf16StepKernels bf16;
  const StepResult want = run_step(plan, model, nullptr);
  const StepResult got = run_step(plan, model, &bf16);

  CHECK(std::fabs(got.loss - want.loss) <= 1e-2 * std::fabs(want.loss));
  for (const auto& [name, slice] : model.named()) {
    const double e =
        relative_error(slice.of(std::span<const float>(got.grads)), slice.of(std::span<const float>(want.grads)));
    INFO(name << ": relative error " << e);
    CHECK(e <= 5e-2);
  }
  // The LM head's workspace: rows of fp32 logits plus their bf16 dl, counted as allocated.
  const std::int64_t rows = (plan.job.seq + chunks - 1) / chunks;
  CHECK(got.lm_head_device_peak == static_cast<std::uint64_t>(rows * plan.job.model.vocab) * (4 + 2));
  CHECK(want.lm_head_device_peak == static_cast<std::uint64_t>(rows * plan.job.model.vocab) * 4);
  // The units bound to the device: under ZeRO 0 every layer's bf16 upload kept from its forward
  // to its backward, with the head's; under ZeRO 3 one unit at a time. One unit's fp32 gradients
  // at a time. Nothing on the CPU, which reads the host's floats in place.
  const std::vector<Slice> units = model.units();
  std::size_t kept = units[model.head_unit()].count, widest = 0;
  for (std::size_t l = 0; l < model.layers.size(); ++l) kept += units[ModelLayout::layer_unit(l)].count;
  for (const Slice& u : units) widest = std::max(widest, u.count);
  CHECK(got.params_device_peak == 2 * (stage == 0 ? kept : widest));
  CHECK(got.gradients_device_peak == 4 * widest);
  CHECK(want.params_device_peak == 0);
  CHECK(want.gradients_device_peak == 0);
}

TEST_CASE("a bf16 step is not the fp32 step: the comparison can fail", "[train_step][bf16]") {
  // The same step with a gradient that rounds differently: guard against a test double that
  // silently computes in fp32 (then the errors above would be exactly 0).
  const plan::Plan plan = test::training_plan(1, 1, Layout::Contiguous, BackwardMode::QRing, CheckpointPolicy::None,
                                              0.5, 1, "causal", 8, 24);
  const ModelLayout model(plan.job.model);
  test::Bf16StepKernels bf16;
  const StepResult want = run_step(plan, model, nullptr);
  const StepResult got = run_step(plan, model, &bf16);
  CHECK(got.loss != want.loss);
  CHECK(relative_error(got.grads, want.grads) > 1e-5);
}

TEST_CASE("a step that does not fit its device names the plan item and the plan's prediction", "[train_step][bf16]") {
  const plan::Plan plan = test::training_plan(1, 1, Layout::Contiguous, BackwardMode::QRing, CheckpointPolicy::None,
                                              0.5, 1, "causal", 8, 24);
  const ModelLayout model(plan.job.model);
  test::Bf16StepKernels small(1000);  // bytes: less than the first activation (24 x 32 bf16)
  try {
    (void)run_step(plan, model, &small, 5 * 1024 * 1024);
    FAIL("no error");
  } catch (const Error& e) {
    const std::string text = e.what();
    CHECK_THAT(text, Catch::Contains(
                         "device memory, plan item activations: out of memory allocating 0.0 MiB for activations"));
    CHECK_THAT(text, Catch::Contains("the plan predicts 5.0 MiB for activations on a rank"));
  }
}
