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
//
// The arithmetic is a StepKernels' (step_kernels.hpp): logits are a linear layer with an fp32
// output, the loss and dl its cross_entropy calls. On the CPU dl overwrites the logits; where
// activations are bf16 (the GPU) dl is a bf16 buffer beside them, as the tensor-core products
// read it, so the workspace is 4 + 2 bytes a logit, which the planner's lm_head item counts too.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "runtime/training/memory_ledger.hpp"
#include "runtime/training/step_kernels.hpp"

namespace burst::rt {

class ChunkedLmHeadLoss {
 public:
  // chunks >= 1; tokens need not divide evenly (the last chunk is shorter) and chunks > tokens
  // behaves as one token per chunk. ledger may be null.
  ChunkedLmHeadLoss(StepKernels& kernels, int chunks, MemoryLedger* ledger);

  // z [tokens, hidden] and w [hidden, vocab] in the kernels' activation dtype.
  LmHeadForward forward(StepTensor z, std::int64_t tokens, std::int64_t hidden, StepTensor w, std::int64_t vocab,
                        std::span<const std::int32_t> targets);
  // The same z, w, targets as forward. dz [tokens, hidden] overwritten; dw [hidden, vocab] (fp32) accumulated.
  void backward(StepTensor z, std::int64_t tokens, std::int64_t hidden, StepTensor w, std::int64_t vocab,
                std::span<const std::int32_t> targets, double scale, StepTensor dz, StepTensor dw);

  // Bytes of the biggest fp32 logits buffer `chunks` needs: ceil(tokens / chunks) * vocab floats.
  [[nodiscard]] static std::uint64_t workspace_bytes(int chunks, std::int64_t tokens, std::int64_t vocab);

 private:
  // One chunk's buffers: fp32 logits and dl (the logits themselves when activations are fp32).
  struct Workspace {
    MemoryBlock logits, dl;
    MemoryLedger::Hold hold;
    [[nodiscard]] StepTensor logits_tensor(std::size_t elements) const;
    [[nodiscard]] StepTensor dl_tensor(std::size_t elements, DType dtype) const;
  };
  [[nodiscard]] Workspace workspace(std::size_t elements);
  // Computes each chunk's logits into one reusable workspace and hands body(first row, rows, it) the chunk.
  void for_each_chunk(StepTensor z, std::int64_t tokens, std::int64_t hidden, StepTensor w, std::int64_t vocab,
                      const std::function<void(std::int64_t, std::int64_t, const Workspace&)>& body);
  void backward_chunk(StepTensor z, std::int64_t rows, std::int64_t hidden, StepTensor w, std::int64_t vocab,
                      std::span<const std::int32_t> targets, double scale, const Workspace& ws, StepTensor dz,
                      StepTensor dw);

  StepKernels& kernels_;
  int chunks_;
  MemoryLedger* ledger_;
  std::optional<Workspace> kept_;  // chunks == 1 only: from forward until backward
  std::int64_t kept_rows_ = 0, kept_vocab_ = 0;
};

}  // namespace burst::rt
