// The cross-entropy of fp32 logits rows (training_kernels.hpp), the LM head's loss and its
// gradient, with the per-element arithmetic of runtime/training/hd/cross_entropy_row.hpp (the
// CPU LM head runs the same header):
//
//   cross_entropy_loss_kernel             one block per row (grid-stride over rows): the row's
//                                         lse, then thread 0 writes lse - l[target] (double)
//   cross_entropy_backward_bf16_kernel    one block per row: the row's lse again, then each
//                                         thread turns its columns into scale (p - onehot), bf16
//
// A row's lse takes two block reductions: the maximum of the row (block_max), then the sum of
// exp(l - max), each term in float, summed in double per thread and over the block (block_sum).
// Both orders depend on the block size alone: no atomics, the same bits on every run.
//
// dl is bf16, as the tensor-core products that read it want it, in a buffer of its own beside
// the fp32 logits (the GPU step's LM-head workspace, lm_head_loss.hpp).
#include <algorithm>

#include "runtime/cuda/detail/block_sum.cuh"
#include "runtime/cuda/detail/device/launch.cuh"
#include "runtime/cuda/detail/training_checks.hpp"
#include "runtime/cuda/detail/training_kernels.hpp"
#include "runtime/cuda/detail/training_launch.hpp"
#include "runtime/training/hd/cross_entropy_row.hpp"

namespace burst::rt::gpu {
namespace {

// The scratch of a row's two reductions.
struct RowScratch {
  float* max;
  double* sum;
};

// lse of `row` (vocab values), the same on every thread of the block; every thread must call it.
__device__ double row_log_sum_exp(const float* row, std::int64_t vocab, RowScratch scratch) {
  float top = hd::kNegInf;
  for (std::int64_t v = threadIdx.x; v < vocab; v += kTrainThreads) top = fmaxf(top, row[v]);
  top = block_max<kTrainThreads>(top, scratch.max);
  double sum = 0.0;
  for (std::int64_t v = threadIdx.x; v < vocab; v += kTrainThreads) sum += hd::log_sum_exp_term(row[v], top);
  return hd::log_sum_exp_of(static_cast<double>(top), block_sum<kTrainThreads>(sum, scratch.sum));
}

// The row's target, checked on the host; one outside [-1, vocab) is a fault, not a wild read.
__device__ std::int32_t target_of(const std::int32_t* targets, std::int64_t row, std::int64_t vocab) {
  const std::int32_t target = targets[row];
  if (target < kIgnoredTarget || target >= vocab) __trap();
  return target;
}

__global__ void __launch_bounds__(kTrainThreads)
    cross_entropy_loss_kernel(const float* __restrict__ logits, std::int64_t rows, std::int64_t vocab,
                              const std::int32_t* __restrict__ targets, double* __restrict__ row_loss) {
  __shared__ float max_scratch[kBlockSumScratch<kTrainThreads>];
  __shared__ double sum_scratch[kBlockSumScratch<kTrainThreads>];
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const std::int32_t target = target_of(targets, r, vocab);  // the same for the whole block
    const float* row = logits + r * vocab;
    double loss = 0.0;
    if (target != kIgnoredTarget) loss = row_log_sum_exp(row, vocab, {max_scratch, sum_scratch}) - row[target];
    if (threadIdx.x == 0) row_loss[r] = loss;
  }
}

__global__ void __launch_bounds__(kTrainThreads)
    cross_entropy_backward_bf16_kernel(const float* __restrict__ logits, std::int64_t rows, std::int64_t vocab,
                                       const std::int32_t* __restrict__ targets, float scale, Bf16* __restrict__ dl) {
  __shared__ float max_scratch[kBlockSumScratch<kTrainThreads>];
  __shared__ double sum_scratch[kBlockSumScratch<kTrainThreads>];
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const std::int32_t target = target_of(targets, r, vocab);
    const float* row = logits + r * vocab;
    Bf16* out = dl + r * vocab;
    if (target == kIgnoredTarget) {
      for (std::int64_t v = threadIdx.x; v < vocab; v += kTrainThreads) out[v] = to_bf16(0.0f);
      continue;
    }
    const auto lse = static_cast<float>(row_log_sum_exp(row, vocab, {max_scratch, sum_scratch}));
    for (std::int64_t v = threadIdx.x; v < vocab; v += kTrainThreads) {
      out[v] = to_bf16(hd::softmax_minus_onehot(row[v], lse, v == target, scale));
    }
  }
}

// Blocks of the row loops: one per row, up to the elementwise kernels' grid limit.
unsigned row_blocks(std::int64_t rows) { return static_cast<unsigned>(std::min(rows, kMaxElementBlocks)); }

}  // namespace

void cross_entropy_loss_rows(const float* logits, std::int64_t rows, std::int64_t vocab, const std::int32_t* targets,
                             double* row_loss, cudaStream_t stream) {
  check_cross_entropy("cross_entropy_loss_rows", logits, rows, vocab, targets, {"row_loss", row_loss}, rows);
  if (rows == 0) return;
  launch(cross_entropy_loss_kernel, row_blocks(rows), kTrainThreads, 0, stream, "cross_entropy_loss_kernel", logits,
         rows, vocab, targets, row_loss);
}

void cross_entropy_backward(const float* logits, std::int64_t rows, std::int64_t vocab, const std::int32_t* targets,
                            float scale, Bf16* dl, cudaStream_t stream) {
  check_cross_entropy("cross_entropy_backward", logits, rows, vocab, targets, {"dl", dl}, rows * vocab);
  if (rows == 0) return;
  launch(cross_entropy_backward_bf16_kernel, row_blocks(rows), kTrainThreads, 0, stream,
         "cross_entropy_backward_bf16_kernel", logits, rows, vocab, targets, scale, dl);
}

}  // namespace burst::rt::gpu
