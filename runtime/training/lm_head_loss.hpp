// The LM head fused with the cross-entropy loss, in sequence chunks, so the [tokens x vocab]
// logits never exist at once (BurstEngine's sequence-level fusion of the LM head and loss).
//
// Given z [tokens, hidden] (the final norm's output), W [hidden, vocab] and one target per
// token (-1: ignored, not counted), with logits l_t = z_t W:
//   loss_sum = sum over counted t of (lse_t - l_t[target_t]),   lse_t = log sum_v exp(l_t[v])
// The gradient of scale * loss_sum (scale is typically 1 / counted over all micro-batches):
//   dl_t = scale (softmax(l_t) - onehot(target_t)) for counted rows, 0 for ignored rows
//   dz = dl W^T,   dW += z^T dl
// Every row's loss and dl depend on that row's logits only, so rows split into chunks freely:
// forward computes one chunk's logits into a reusable [ceil(tokens / chunks) x vocab] buffer,
// reduces them to the chunk's loss and drops them; backward recomputes them in the buffer,
// turns them in place into dl and does the chunk's two GEMMs. The price is one extra
// [rows x hidden x vocab] GEMM per chunk; the gain is a workspace `chunks` times smaller.
// lse is max-subtracted with a double sum, so large logits neither overflow nor lose mass.
//
// chunks == 1 is the plain unfused baseline: forward keeps the whole logits until backward,
// which turns them into dl without recomputing, then frees them. The MemoryLedger (if any)
// holds each workspace under MemoryUse::LossWorkspace while it lives.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "runtime/training/memory_ledger.hpp"

namespace burst::rt {

struct LmHeadForward {
  double loss_sum = 0;       // summed over counted tokens
  std::int64_t counted = 0;  // tokens whose target is not -1
};

class ChunkedLmHeadLoss {
 public:
  // chunks >= 1; tokens need not divide evenly (the last chunk is shorter) and chunks > tokens
  // behaves as one token per chunk. ledger may be null.
  ChunkedLmHeadLoss(int chunks, MemoryLedger* ledger);

  LmHeadForward forward(std::span<const float> z, std::int64_t tokens, std::int64_t hidden, std::span<const float> w,
                        std::int64_t vocab, std::span<const std::int32_t> targets);
  // The same z, w, targets as forward. dz [tokens, hidden] overwritten; dw [hidden, vocab] accumulated.
  void backward(std::span<const float> z, std::int64_t tokens, std::int64_t hidden, std::span<const float> w,
                std::int64_t vocab, std::span<const std::int32_t> targets, double scale, std::span<float> dz,
                std::span<float> dw);

  // Bytes of the biggest logits buffer `chunks` needs: ceil(tokens / chunks) * vocab floats.
  [[nodiscard]] static std::uint64_t workspace_bytes(int chunks, std::int64_t tokens, std::int64_t vocab);

 private:
  // Computes each chunk's logits into one reusable buffer (held in the ledger while it lives)
  // and hands body(first row, rows, logits) the chunk.
  void for_each_chunk(std::span<const float> z, std::int64_t tokens, std::int64_t hidden, std::span<const float> w,
                      std::int64_t vocab, const std::function<void(std::int64_t, std::int64_t, float*)>& body);

  int chunks_;
  MemoryLedger* ledger_;
  std::vector<float> kept_logits_;  // chunks == 1 only: from forward until backward
  MemoryLedger::Hold kept_hold_;
};

}  // namespace burst::rt
