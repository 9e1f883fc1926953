// The assembled training step on one rank against central finite differences of its own loss:
// the wiring of residuals, norms, RoPE, attention and the LM head, which the per-operation
// tests and the distributed-vs-single-rank check (same code on both sides) cannot see. For
// each weight tensor, the entries with the largest gradients are perturbed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "runtime/comm/loopback_communicator.hpp"
#include "runtime/training/train_step.hpp"
#include "tests/support/random_tokens.hpp"
#include "tests/support/ring_plan.hpp"

using namespace burst;
using namespace burst::rt;

namespace {

struct OneRank {
  plan::Plan plan;
  ModelLayout model;
  std::unique_ptr<Communicator> comm = make_self_communicator();
  MemoryLedger ledger;
  TrainingStep step;
  test::RandomTokens in;  // every fifth target not counted

  OneRank(Layout layout, CheckpointPolicy policy, int chunks, std::int64_t seq)
      : plan(test::training_plan(1, 1, layout, BackwardMode::QRing, policy, 0.5, chunks, "causal", 4, seq)),
        model(plan.job.model),
        step(plan, model, seq, *comm, ledger),
        in(test::random_tokens(seq, 7, 5, 4)) {}

  // The mean loss, and its gradient into `grads`. Tokens are in position order (one rank).
  double loss(std::span<const float> params, std::span<float> grads) {
    const StepOutcome out = step.run(params, grads, {in.tokens, in.targets, in.counted});
    return out.loss_sum / static_cast<double>(in.counted);
  }
};

void check_against_finite_differences(OneRank& r) {
  std::vector<float> params = initial_params(r.model, 3);
  // Gains away from 1 so their gradients are not special.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> jitter(0.8f, 1.2f);
  for (const auto& [name, slice] : r.model.named()) {
    if (name.ends_with("norm")) {
      for (float& g : slice.of(std::span<float>(params))) g = jitter(rng);
    }
  }
  std::vector<float> grads(r.model.size()), scratch(r.model.size());
  (void)r.loss(params, grads);
  for (const auto& [name, slice] : r.model.named()) {
    std::vector<std::size_t> order(slice.count);
    std::iota(order.begin(), order.end(), slice.offset);
    std::partial_sort(order.begin(), order.begin() + 2, order.end(),
                      [&](std::size_t a, std::size_t b) { return std::fabs(grads[a]) > std::fabs(grads[b]); });
    for (int k = 0; k < 2; ++k) {
      const std::size_t i = order[static_cast<std::size_t>(k)];
      const float saved = params[i];
      const float h = 1e-2f * std::max(1.0f, std::fabs(saved));
      params[i] = saved + h;
      const double up = r.loss(params, scratch);
      params[i] = saved - h;
      const double down = r.loss(params, scratch);
      params[i] = saved;
      const double numeric = (up - down) / (2.0 * static_cast<double>(h));
      INFO(name << " entry " << i - slice.offset << ": analytic " << grads[i] << ", numeric " << numeric);
      CHECK(std::fabs(numeric - grads[i]) <= 3e-2 * std::fabs(numeric) + 2e-4);
    }
  }
}

}  // namespace

TEST_CASE("the whole step's gradient matches finite differences of its loss", "[train_step]") {
  SECTION("every activation kept, unfused LM head") {
    OneRank r(Layout::Contiguous, CheckpointPolicy::None, 1, 24);
    check_against_finite_differences(r);
  }
  SECTION("sequence-level stash on the striped layout, LM head in 5 chunks") {
    OneRank r(Layout::Striped, CheckpointPolicy::SeqStash, 5, 24);
    CHECK(r.step.recomputed_rows() == 12);
    check_against_finite_differences(r);
  }
}

TEST_CASE("the model refuses what the runtime cannot train, naming the plan field", "[train_step]") {
  ModelSpec m;
  m.name = "odd";
  m.layers = 1;
  m.hidden = 12;
  m.ffn = 8;
  m.heads = 4;
  m.kv_heads = 3;
  m.head_dim = 3;
  m.vocab = 100;
  m.gated_mlp = false;
  m.activation = "gelu";
  m.qkv_bias = true;
  try {
    const ModelLayout layout(m);
    FAIL("no error");
  } catch (const Error& e) {
    const std::string text = e.what();
    CHECK_THAT(text, Catch::Contains("plan:/job/model/gated_mlp: odd has a non-gated gelu MLP"));
    CHECK_THAT(text, Catch::Contains("plan:/job/model/kv_heads: 4 heads cannot share 3 KV heads evenly"));
    CHECK_THAT(text, Catch::Contains("plan:/job/model/head_dim: 3 is odd"));
    CHECK_THAT(text, Catch::Contains("plan:/job/model/vocab: 100 tokens"));
    CHECK_THAT(text, Catch::Contains("plan:/job/model/qkv_bias: odd has biases on Q, K and V"));
  }
}
