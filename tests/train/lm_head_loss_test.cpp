// The chunked LM head and loss: loss and gradients against a plain double reference that
// materialises the logits, for several chunk counts (not dividing the tokens, more chunks than
// tokens) with ignored targets; fused equals unfused; dz against finite differences; the
// ledger's workspace peak shrinks with the chunk count; argument errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "runtime/kernels/random_values.hpp"
#include "runtime/training/lm_head_loss.hpp"
#include "tests/support/error_text.hpp"

using namespace burst;

namespace {

struct HeadCase {
  std::int64_t tokens, hidden, vocab;
  std::vector<float> z, w;
  std::vector<std::int32_t> targets;
};

// Random z and W, random targets except tokens 2, 6, 10, ... which are ignored (-1).
HeadCase make_problem(std::int64_t tokens, std::int64_t hidden, std::int64_t vocab, unsigned seed) {
  std::mt19937 rng(seed);
  HeadCase p{tokens, hidden, vocab, rt::random_values(tokens * hidden, rng), rt::random_values(hidden * vocab, rng),
             {}};
  std::uniform_int_distribution<std::int32_t> pick(0, static_cast<std::int32_t>(vocab - 1));
  for (std::int64_t t = 0; t < tokens; ++t) p.targets.push_back(t % 4 == 2 ? -1 : pick(rng));
  return p;
}

struct Reference {
  double loss_sum = 0;
  std::int64_t counted = 0;
  std::vector<double> dz, dw;
};

// Everything in double, the whole [tokens x vocab] logits at once.
Reference reference(const HeadCase& p, double scale) {
  Reference ref;
  ref.dz.assign(p.tokens * p.hidden, 0.0);
  ref.dw.assign(p.hidden * p.vocab, 0.0);
  for (std::int64_t t = 0; t < p.tokens; ++t) {
    if (p.targets[t] < 0) continue;
    std::vector<double> logits(p.vocab, 0.0);
    for (std::int64_t v = 0; v < p.vocab; ++v) {
      for (std::int64_t h = 0; h < p.hidden; ++h)
        logits[v] += static_cast<double>(p.z[t * p.hidden + h]) * p.w[h * p.vocab + v];
    }
    double sum = 0;
    for (const double l : logits) sum += std::exp(l);
    ref.loss_sum += std::log(sum) - logits[p.targets[t]];
    ++ref.counted;
    for (std::int64_t v = 0; v < p.vocab; ++v) {
      const double dl = scale * (std::exp(logits[v]) / sum - (v == p.targets[t] ? 1.0 : 0.0));
      for (std::int64_t h = 0; h < p.hidden; ++h) {
        ref.dz[t * p.hidden + h] += dl * p.w[h * p.vocab + v];
        ref.dw[h * p.vocab + v] += p.z[t * p.hidden + h] * dl;
      }
    }
  }
  return ref;
}

rt::LmHeadForward forward(rt::ChunkedLmHeadLoss& head, const HeadCase& p, std::int64_t hidden = 0) {
  return head.forward(rt::host_tensor(std::span<const float>(p.z)), p.tokens, hidden > 0 ? hidden : p.hidden,
                      rt::host_tensor(std::span<const float>(p.w)), p.vocab, p.targets);
}

void backward(rt::ChunkedLmHeadLoss& head, const HeadCase& p, double scale, std::vector<float>& dz,
              std::vector<float>& dw) {
  head.backward(rt::host_tensor(std::span<const float>(p.z)), p.tokens, p.hidden,
                rt::host_tensor(std::span<const float>(p.w)), p.vocab, p.targets, scale,
                rt::host_tensor(std::span<float>(dz)), rt::host_tensor(std::span<float>(dw)));
}

struct Result {
  rt::LmHeadForward forward;
  std::vector<float> dz, dw;
};

// forward then backward; dw starts at `dw_start` everywhere (it accumulates).
Result run(const HeadCase& p, int chunks, double scale, float dw_start = 0.0f) {
  rt::HostStepKernels kernels;
  rt::ChunkedLmHeadLoss head(kernels, chunks, nullptr);
  Result r{forward(head, p), std::vector<float>(p.tokens * p.hidden, 99.0f),
           std::vector<float>(p.hidden * p.vocab, dw_start)};
  backward(head, p, scale, r.dz, r.dw);
  return r;
}

}  // namespace

TEST_CASE("loss and gradients match the double reference for any chunk count", "[lm_head]") {
  const int chunks = GENERATE(1, 3, 7, 16);
  const HeadCase p = make_problem(10, 6, 13, 11);
  const double scale = 0.25;
  const Reference ref = reference(p, scale);
  const Result got = run(p, chunks, scale, 0.5f);
  CAPTURE(chunks);
  CHECK(got.forward.counted == ref.counted);
  CHECK(got.forward.counted == 8);  // tokens 2 and 6 ignored
  CHECK(got.forward.loss_sum == Approx(ref.loss_sum).epsilon(1e-6));
  for (std::size_t i = 0; i < ref.dz.size(); ++i) CHECK(got.dz[i] == Approx(ref.dz[i]).margin(1e-6));
  for (std::size_t i = 0; i < ref.dw.size(); ++i) CHECK(got.dw[i] - 0.5 == Approx(ref.dw[i]).margin(1e-6));
}

TEST_CASE("the fused head (chunks 4) equals the unfused one (chunks 1)", "[lm_head]") {
  const HeadCase p = make_problem(37, 16, 50, 12);
  const double scale = 1.0 / 28;
  const Result fused = run(p, 4, scale), unfused = run(p, 1, scale);
  CHECK(fused.forward.counted == unfused.forward.counted);
  CHECK(fused.forward.loss_sum == Approx(unfused.forward.loss_sum).epsilon(1e-5));
  for (std::size_t i = 0; i < fused.dz.size(); ++i)
    CHECK(fused.dz[i] == Approx(unfused.dz[i]).epsilon(1e-5).margin(1e-7));
  for (std::size_t i = 0; i < fused.dw.size(); ++i)
    CHECK(fused.dw[i] == Approx(unfused.dw[i]).epsilon(1e-5).margin(1e-7));
}

TEST_CASE("dz matches finite differences of the loss", "[lm_head]") {
  HeadCase p = make_problem(3, 4, 5, 13);
  p.targets = {4, -1, 0};
  const Result got = run(p, 2, 1.0);
  rt::HostStepKernels kernels;
  rt::ChunkedLmHeadLoss head(kernels, 2, nullptr);
  const float h = 1e-2f;
  for (std::size_t i = 0; i < p.z.size(); ++i) {
    const float saved = p.z[i];
    p.z[i] = saved + h;
    const double up = forward(head, p).loss_sum, z_up = p.z[i];
    p.z[i] = saved - h;
    const double down = forward(head, p).loss_sum, z_down = p.z[i];
    p.z[i] = saved;
    CHECK(got.dz[i] == Approx((up - down) / (z_up - z_down)).margin(1e-3));
  }
}

TEST_CASE("the ledger's workspace peak is one chunk of rows", "[lm_head]") {
  const HeadCase p = make_problem(64, 8, 1000, 14);
  rt::MemoryLedger unfused_ledger, fused_ledger;
  rt::HostStepKernels kernels;

  rt::ChunkedLmHeadLoss unfused(kernels, 1, &unfused_ledger);
  forward(unfused, p);
  CHECK(unfused_ledger.current() == 64 * 1000 * sizeof(float));  // kept until backward
  std::vector<float> dz(p.tokens * p.hidden), dw(p.hidden * p.vocab);
  backward(unfused, p, 1.0, dz, dw);
  CHECK(unfused_ledger.current() == 0);

  rt::ChunkedLmHeadLoss fused(kernels, 8, &fused_ledger);
  forward(fused, p);
  CHECK(fused_ledger.current() == 0);  // dropped with the forward
  backward(fused, p, 1.0, dz, dw);
  CHECK(fused_ledger.current() == 0);

  CHECK(unfused_ledger.peak(rt::MemoryUse::LossWorkspace) == 64 * 1000 * sizeof(float));
  CHECK(fused_ledger.peak(rt::MemoryUse::LossWorkspace) == 8 * 1000 * sizeof(float));
  CHECK(rt::ChunkedLmHeadLoss::workspace_bytes(8, 65, 1000) == 9 * 1000 * sizeof(float));  // rows rounded up
  CHECK(rt::ChunkedLmHeadLoss::workspace_bytes(100, 64, 1000) == 1000 * sizeof(float));
}

TEST_CASE("the LM head names bad arguments", "[lm_head]") {
  rt::HostStepKernels kernels;
  CHECK(test::error_text([&] {
          rt::ChunkedLmHeadLoss head(kernels, 0, nullptr);
        }).find("ChunkedLmHeadLoss: chunks: 0 chunks") != std::string::npos);

  HeadCase p = make_problem(6, 4, 10, 15);
  p.targets[3] = 10;
  rt::ChunkedLmHeadLoss head(kernels, 2, nullptr);
  std::string text = test::error_text([&] { forward(head, p); });
  CHECK(text.find("ChunkedLmHeadLoss::forward: targets[3]: target 10 is outside the vocabulary of 10 tokens") !=
        std::string::npos);
  text = test::error_text([&] { forward(head, p, 5); });
  CHECK(text.find("ChunkedLmHeadLoss::forward: z: 24 values (valid: tokens * hidden = 30)") != std::string::npos);

  p.targets[3] = 1;
  rt::ChunkedLmHeadLoss unfused(kernels, 1, nullptr);
  std::vector<float> dz(24), dw(40);
  text = test::error_text([&] { backward(unfused, p, 1.0, dz, dw); });
  CHECK(text.find("ChunkedLmHeadLoss::backward: logits: 0 logits kept") != std::string::npos);
}
