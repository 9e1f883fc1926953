// The chunked LM head and cross-entropy (see lm_head_loss.hpp for the math). A row's terms and
// its softmax-minus-onehot gradient are runtime/training/hd/cross_entropy_row.hpp's, in double.
#include "runtime/training/lm_head_loss.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/kernels/blas.hpp"
#include "runtime/training/argument_checks.hpp"
#include "runtime/training/hd/cross_entropy_row.hpp"

namespace burst::rt {
namespace {

constexpr std::string_view kForward = "ChunkedLmHeadLoss::forward";
constexpr std::string_view kBackward = "ChunkedLmHeadLoss::backward";
constexpr std::int32_t kIgnored = -1;

void check_chunks(int chunks) {
  if (chunks < 1) {
    throw Error(Problem{"ChunkedLmHeadLoss: chunks", fmt::format("{} chunks", chunks), "chunks >= 1",
                        "1 keeps the whole logits (unfused); more divide the workspace"});
  }
}

// Rows per chunk: ceil(tokens / chunks), the last chunk taking what is left.
std::int64_t chunk_rows(int chunks, std::int64_t tokens) { return (tokens + chunks - 1) / chunks; }

MemoryLedger::Hold hold_workspace(MemoryLedger* ledger, std::uint64_t bytes) {
  return ledger == nullptr ? MemoryLedger::Hold{} : ledger->hold(MemoryUse::LossWorkspace, bytes);
}

void check_inputs(Problems& p, std::string_view call, std::size_t z, std::int64_t tokens, std::int64_t hidden,
                  std::size_t w, std::int64_t vocab, std::span<const std::int32_t> targets) {
  check_at_least(p, call, "tokens", tokens, 0);
  check_at_least(p, call, "hidden", hidden, 1);
  check_at_least(p, call, "vocab", vocab, 1);
  check_size(p, call, "z", z, tokens * hidden, "tokens * hidden");
  check_size(p, call, "w", w, hidden * vocab, "hidden * vocab");
  check_size(p, call, "targets", targets.size(), tokens, "one per token");
  check_ids(p, call, "target", targets, kIgnored, vocab, fmt::format("-1 (ignored) or 0 <= target < {}", vocab));
}

// logits [rows, vocab] = z [rows, hidden] W [hidden, vocab].
void compute_logits(const float* z, std::int64_t rows, std::int64_t hidden, std::span<const float> w,
                    std::int64_t vocab, float* logits) {
  gemm(linear_forward_gemm(rows, hidden, vocab), z, w.data(), logits);
}

// log sum_v exp(row[v]), max-subtracted, summed in double.
double log_sum_exp(const float* row, std::int64_t vocab) {
  const double top = *std::max_element(row, row + vocab);
  double sum = 0;
  for (std::int64_t v = 0; v < vocab; ++v) sum += hd::log_sum_exp_term(row[v], top);
  return hd::log_sum_exp_of(top, sum);
}

void add_loss(const float* logits, std::span<const std::int32_t> targets, std::int64_t vocab, LmHeadForward& out) {
  for (std::size_t r = 0; r < targets.size(); ++r) {
    if (targets[r] == kIgnored) continue;
    const float* row = logits + static_cast<std::int64_t>(r) * vocab;
    out.loss_sum += log_sum_exp(row, vocab) - row[targets[r]];
    ++out.counted;
  }
}

// Turns logits [rows, vocab] in place into dl = scale (softmax - onehot), zero for ignored rows.
void to_dlogits(float* logits, std::span<const std::int32_t> targets, std::int64_t vocab, double scale) {
  for (std::size_t r = 0; r < targets.size(); ++r) {
    float* row = logits + static_cast<std::int64_t>(r) * vocab;
    if (targets[r] == kIgnored) {
      std::fill(row, row + vocab, 0.0f);
      continue;
    }
    const double lse = log_sum_exp(row, vocab);
    for (std::int64_t v = 0; v < vocab; ++v) row[v] = hd::softmax_minus_onehot(row[v], lse, v == targets[r], scale);
  }
}

// dz [rows, hidden] = dl W^T (overwritten); dW += z^T dl.
void backward_gemms(const float* z, std::int64_t rows, std::int64_t hidden, std::span<const float> w,
                    std::int64_t vocab, const float* dl, float* dz, std::span<float> dw) {
  gemm(linear_input_grad_gemm(rows, hidden, vocab, false), dl, w.data(), dz);
  gemm(linear_weight_grad_gemm(rows, hidden, vocab), z, dl, dw.data());
}

}  // namespace

ChunkedLmHeadLoss::ChunkedLmHeadLoss(int chunks, MemoryLedger* ledger) : chunks_(chunks), ledger_(ledger) {
  check_chunks(chunks);
}

std::uint64_t ChunkedLmHeadLoss::workspace_bytes(int chunks, std::int64_t tokens, std::int64_t vocab) {
  check_chunks(chunks);
  return float_bytes(static_cast<std::size_t>(chunk_rows(chunks, tokens) * vocab));
}

LmHeadForward ChunkedLmHeadLoss::forward(std::span<const float> z, std::int64_t tokens, std::int64_t hidden,
                                         std::span<const float> w, std::int64_t vocab,
                                         std::span<const std::int32_t> targets) {
  Problems problems;
  check_inputs(problems, kForward, z.size(), tokens, hidden, w.size(), vocab, targets);
  problems.throw_if_any();

  LmHeadForward out;
  if (chunks_ == 1) {
    kept_hold_.release();
    kept_logits_.assign(static_cast<std::size_t>(tokens * vocab), 0.0f);
    kept_hold_ = hold_workspace(ledger_, workspace_bytes(1, tokens, vocab));
    compute_logits(z.data(), tokens, hidden, w, vocab, kept_logits_.data());
    add_loss(kept_logits_.data(), targets, vocab, out);
    return out;
  }
  for_each_chunk(z, tokens, hidden, w, vocab, [&](std::int64_t t0, std::int64_t n, float* logits) {
    add_loss(logits, targets.subspan(static_cast<std::size_t>(t0), static_cast<std::size_t>(n)), vocab, out);
  });
  return out;
}

void ChunkedLmHeadLoss::backward(std::span<const float> z, std::int64_t tokens, std::int64_t hidden,
                                 std::span<const float> w, std::int64_t vocab, std::span<const std::int32_t> targets,
                                 double scale, std::span<float> dz, std::span<float> dw) {
  Problems problems;
  check_inputs(problems, kBackward, z.size(), tokens, hidden, w.size(), vocab, targets);
  check_size(problems, kBackward, "dz", dz.size(), tokens * hidden, "tokens * hidden");
  check_size(problems, kBackward, "dw", dw.size(), hidden * vocab, "hidden * vocab");
  if (chunks_ == 1 && static_cast<std::int64_t>(kept_logits_.size()) != tokens * vocab) {
    problems.add(where(kBackward, "logits"),
                 fmt::format("{} logits kept for {} tokens x {} vocab", kept_logits_.size(), tokens, vocab), "",
                 "the unfused head (chunks 1) needs a forward on the same z, w and targets first");
  }
  problems.throw_if_any();

  if (chunks_ == 1) {
    to_dlogits(kept_logits_.data(), targets, vocab, scale);
    backward_gemms(z.data(), tokens, hidden, w, vocab, kept_logits_.data(), dz.data(), dw);
    std::vector<float>().swap(kept_logits_);
    kept_hold_.release();
    return;
  }
  for_each_chunk(z, tokens, hidden, w, vocab, [&](std::int64_t t0, std::int64_t n, float* logits) {
    to_dlogits(logits, targets.subspan(static_cast<std::size_t>(t0), static_cast<std::size_t>(n)), vocab, scale);
    backward_gemms(z.data() + t0 * hidden, n, hidden, w, vocab, logits, dz.data() + t0 * hidden, dw);
  });
}

void ChunkedLmHeadLoss::for_each_chunk(std::span<const float> z, std::int64_t tokens, std::int64_t hidden,
                                       std::span<const float> w, std::int64_t vocab,
                                       const std::function<void(std::int64_t, std::int64_t, float*)>& body) {
  const std::int64_t rows = chunk_rows(chunks_, tokens);
  std::vector<float> buffer(static_cast<std::size_t>(rows * vocab));
  const MemoryLedger::Hold held = hold_workspace(ledger_, workspace_bytes(chunks_, tokens, vocab));
  for (std::int64_t t0 = 0; t0 < tokens; t0 += rows) {
    const std::int64_t n = std::min(rows, tokens - t0);
    compute_logits(z.data() + t0 * hidden, n, hidden, w, vocab, buffer.data());
    body(t0, n, buffer.data());
  }
}

}  // namespace burst::rt
