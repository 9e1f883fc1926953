// The two per-row kernels of a ring step (flash_attention.hpp), one warp per row of head_dim
// values (rows = tokens * heads), lanes striding over the row:
//   merge_partials_kernel  folds (o_i, lse_i) into (o, lse) with the shared merge of
//                          hd/partial_merge.hpp (the CPU's merge_partial, row for row)
//   attention_delta_kernel D = rowsum(O * dO), summed per lane then over the warp
#include "runtime/cuda/detail/device/launch.cuh"
#include "runtime/cuda/detail/flash_attention.hpp"
#include "runtime/cuda/detail/flash_checks.hpp"
#include "runtime/kernels/hd/index_math.hpp"
#include "runtime/kernels/hd/partial_merge.hpp"

namespace burst::rt::gpu {
namespace {

constexpr int kRowsPerBlock = 4;  // one warp each

__global__ void __launch_bounds__(32 * kRowsPerBlock)
    merge_partials_kernel(float* __restrict__ o, float* __restrict__ lse, const float* __restrict__ o_i,
                          const float* __restrict__ lse_i, std::int64_t rows, std::int64_t head_dim) {
  const std::int64_t row = std::int64_t{blockIdx.x} * kRowsPerBlock + threadIdx.x / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  if (row >= rows) return;
  const hd::PartialMerge merge = hd::merge_partials(lse[row], lse_i[row]);
  if (merge.kind == hd::MergeKind::KeepAccumulator) return;
  float* acc = o + row * head_dim;
  const float* part = o_i + row * head_dim;
  for (std::int64_t c = lane; c < head_dim; c += 32) acc[c] = hd::merged_value(merge, acc[c], part[c]);
  __syncwarp();  // every lane has read lse[row] before it changes
  if (lane == 0) lse[row] = merge.lse;
}

__global__ void __launch_bounds__(32 * kRowsPerBlock)
    attention_delta_kernel(const float* __restrict__ o, const float* __restrict__ d_o, float* __restrict__ delta,
                           std::int64_t rows, std::int64_t head_dim) {
  const std::int64_t row = std::int64_t{blockIdx.x} * kRowsPerBlock + threadIdx.x / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  if (row >= rows) return;
  float sum = 0.0f;
  for (std::int64_t c = lane; c < head_dim; c += 32) sum += o[row * head_dim + c] * d_o[row * head_dim + c];
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lane == 0) delta[row] = sum;
}

unsigned blocks_for(std::int64_t rows) { return static_cast<unsigned>(hd::ceil_div(rows, kRowsPerBlock)); }

}  // namespace

void merge_partials(float* o, float* lse, const float* o_i, const float* lse_i, std::int64_t rows,
                    std::int64_t head_dim, cudaStream_t stream) {
  check_row_kernel("merge_partials", rows, head_dim, o, lse, o_i, lse_i);
  if (rows == 0) return;
  launch(merge_partials_kernel, blocks_for(rows), 32 * kRowsPerBlock, 0, stream, "merge_partials_kernel", o, lse, o_i,
         lse_i, rows, head_dim);
}

void attention_delta(const float* o, const float* d_o, float* delta, std::int64_t rows, std::int64_t head_dim,
                     cudaStream_t stream) {
  check_row_kernel("attention_delta", rows, head_dim, o, d_o, delta, delta);
  if (rows == 0) return;
  launch(attention_delta_kernel, blocks_for(rows), 32 * kRowsPerBlock, 0, stream, "attention_delta_kernel", o, d_o,
         delta, rows, head_dim);
}

}  // namespace burst::rt::gpu
