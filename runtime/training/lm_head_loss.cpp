// The chunked LM head and cross-entropy (see lm_head_loss.hpp for the math): the chunking and
// the workspace's lifetime here, the arithmetic the StepKernels'.
#include "runtime/training/lm_head_loss.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/training/argument_checks.hpp"
#include "runtime/training/hd/cross_entropy_row.hpp"
#include "runtime/training/step_buffer.hpp"

namespace burst::rt {
namespace {

constexpr std::string_view kForward = "ChunkedLmHeadLoss::forward";
constexpr std::string_view kBackward = "ChunkedLmHeadLoss::backward";
void check_chunks(int chunks) {
  if (chunks < 1) {
    throw Error(Problem{"ChunkedLmHeadLoss: chunks", fmt::format("{} chunks", chunks), "chunks >= 1",
                        "1 keeps the whole logits (unfused); more divide the workspace"});
  }
}

// Rows per chunk: ceil(tokens / chunks), the last chunk taking what is left.
std::int64_t chunk_rows(int chunks, std::int64_t tokens) { return (tokens + chunks - 1) / chunks; }

// fp32 logits in both columns; on the device a bf16 dl beside them when activations are bf16.
MemoryLedger::Hold hold_workspace(MemoryLedger* ledger, std::size_t logits) {
  if (ledger == nullptr) return {};
  const std::size_t activation = ledger->device_layout().activation_bytes;
  return ledger->hold(MemoryUse::LossWorkspace, float_bytes(logits),
                      float_bytes(logits) + (activation < sizeof(float) ? logits * activation : 0));
}

void check_inputs(Problems& p, std::string_view call, std::size_t z, std::int64_t tokens, std::int64_t hidden,
                  std::size_t w, std::int64_t vocab, std::span<const std::int32_t> targets) {
  check_at_least(p, call, "tokens", tokens, 0);
  check_at_least(p, call, "hidden", hidden, 1);
  check_at_least(p, call, "vocab", vocab, 1);
  check_size(p, call, "z", z, tokens * hidden, "tokens * hidden");
  check_size(p, call, "w", w, hidden * vocab, "hidden * vocab");
  check_size(p, call, "targets", targets.size(), tokens, "one per token");
  check_ids(p, call, "target", targets, hd::kIgnoredTarget, vocab,
            fmt::format("-1 (ignored) or 0 <= target < {}", vocab));
}

}  // namespace

ChunkedLmHeadLoss::ChunkedLmHeadLoss(StepKernels& kernels, int chunks, MemoryLedger* ledger)
    : kernels_(kernels), chunks_(chunks), ledger_(ledger) {
  check_chunks(chunks);
}

std::uint64_t ChunkedLmHeadLoss::workspace_bytes(int chunks, std::int64_t tokens, std::int64_t vocab) {
  check_chunks(chunks);
  return float_bytes(static_cast<std::size_t>(chunk_rows(chunks, tokens) * vocab));
}

StepTensor ChunkedLmHeadLoss::Workspace::logits_tensor(std::size_t elements) const {
  return {logits.data(), elements, DType::F32};
}

StepTensor ChunkedLmHeadLoss::Workspace::dl_tensor(std::size_t elements, DType dtype) const {
  return {dl.data() != nullptr ? dl.data() : logits.data(), elements, dtype};
}

ChunkedLmHeadLoss::Workspace ChunkedLmHeadLoss::workspace(std::size_t elements) {
  const auto allocate = [&](std::size_t bytes) {
    const auto get = [&] { return kernels_.memory().allocate(bytes); };
    return ledger_ != nullptr ? allocating_for(*ledger_, MemoryUse::LossWorkspace, get) : get();
  };
  Workspace ws;
  ws.logits = allocate(float_bytes(elements));
  const DType dl = kernels_.activation_dtype();
  if (dl != DType::F32) ws.dl = allocate(elements * dtype_size(dl));
  ws.hold = hold_workspace(ledger_, elements);
  return ws;
}

LmHeadForward ChunkedLmHeadLoss::forward(StepTensor z, std::int64_t tokens, std::int64_t hidden, StepTensor w,
                                         std::int64_t vocab, std::span<const std::int32_t> targets) {
  Problems problems;
  check_inputs(problems, kForward, z.count, tokens, hidden, w.count, vocab, targets);
  problems.throw_if_any();

  LmHeadForward out;
  const auto add = [&](const LmHeadForward& chunk) {
    out.loss_sum += chunk.loss_sum;
    out.counted += chunk.counted;
  };
  if (chunks_ == 1) {
    kept_.reset();
    const auto elements = static_cast<std::size_t>(tokens * vocab);
    kept_ = workspace(elements);
    kept_rows_ = tokens;
    kept_vocab_ = vocab;
    kernels_.linear_forward(z, tokens, hidden, w, vocab, kept_->logits_tensor(elements));
    add(kernels_.cross_entropy_loss(kept_->logits_tensor(elements), tokens, vocab, targets));
    return out;
  }
  for_each_chunk(z, tokens, hidden, w, vocab, [&](std::int64_t t0, std::int64_t n, const Workspace& ws) {
    add(kernels_.cross_entropy_loss(ws.logits_tensor(static_cast<std::size_t>(n * vocab)), n, vocab,
                                    targets.subspan(static_cast<std::size_t>(t0), static_cast<std::size_t>(n))));
  });
  return out;
}

void ChunkedLmHeadLoss::backward(StepTensor z, std::int64_t tokens, std::int64_t hidden, StepTensor w,
                                 std::int64_t vocab, std::span<const std::int32_t> targets, double scale, StepTensor dz,
                                 StepTensor dw) {
  Problems problems;
  check_inputs(problems, kBackward, z.count, tokens, hidden, w.count, vocab, targets);
  check_size(problems, kBackward, "dz", dz.count, tokens * hidden, "tokens * hidden");
  check_size(problems, kBackward, "dw", dw.count, hidden * vocab, "hidden * vocab");
  if (chunks_ == 1 && (!kept_ || kept_rows_ != tokens || kept_vocab_ != vocab)) {
    problems.add(
        where(kBackward, "logits"),
        fmt::format("{} logits kept for {} tokens x {} vocab", kept_ ? kept_rows_ * kept_vocab_ : 0, tokens, vocab), "",
        "the unfused head (chunks 1) needs a forward on the same z, w and targets first");
  }
  problems.throw_if_any();

  if (chunks_ == 1) {
    backward_chunk(z, tokens, hidden, w, vocab, targets, scale, *kept_, dz, dw);
    kept_.reset();
    return;
  }
  for_each_chunk(z, tokens, hidden, w, vocab, [&](std::int64_t t0, std::int64_t n, const Workspace& ws) {
    const auto row0 = static_cast<std::size_t>(t0 * hidden), values = static_cast<std::size_t>(n * hidden);
    backward_chunk(z.part(row0, values), n, hidden, w, vocab,
                   targets.subspan(static_cast<std::size_t>(t0), static_cast<std::size_t>(n)), scale, ws,
                   dz.part(row0, values), dw);
  });
}

// dl of the chunk's logits, then dz = dl W^T (overwritten) and dW += z^T dl.
void ChunkedLmHeadLoss::backward_chunk(StepTensor z, std::int64_t rows, std::int64_t hidden, StepTensor w,
                                       std::int64_t vocab, std::span<const std::int32_t> targets, double scale,
                                       const Workspace& ws, StepTensor dz, StepTensor dw) {
  const auto elements = static_cast<std::size_t>(rows * vocab);
  const StepTensor dl = ws.dl_tensor(elements, kernels_.activation_dtype());
  kernels_.cross_entropy_backward(ws.logits_tensor(elements), rows, vocab, targets, scale, dl);
  kernels_.linear_backward(z, rows, hidden, w, vocab, dl, dz, dw, false);
}

void ChunkedLmHeadLoss::for_each_chunk(StepTensor z, std::int64_t tokens, std::int64_t hidden, StepTensor w,
                                       std::int64_t vocab,
                                       const std::function<void(std::int64_t, std::int64_t, const Workspace&)>& body) {
  const std::int64_t rows = chunk_rows(chunks_, tokens);
  const Workspace ws = workspace(static_cast<std::size_t>(rows * vocab));
  for (std::int64_t t0 = 0; t0 < tokens; t0 += rows) {
    const std::int64_t n = std::min(rows, tokens - t0);
    kernels_.linear_forward(z.part(static_cast<std::size_t>(t0 * hidden), static_cast<std::size_t>(n * hidden)), n,
                            hidden, w, vocab, ws.logits_tensor(static_cast<std::size_t>(n * vocab)));
    body(t0, n, ws);
  }
}

}  // namespace burst::rt
