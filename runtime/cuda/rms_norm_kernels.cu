// RMSNorm on bf16 rows with fp32 arithmetic (training_kernels.hpp; the per-element formulas are
// runtime/training/hd/rms_norm.hpp's):
//   rms_norm_forward_kernel        one block per row: sum of squares (block_sum), r, y; with
//                                  kAddFirst, the row is first formed as a + b (the residual
//                                  stream's add), stored, and normed in the same pass: one read
//                                  of a and b instead of a, b, then the sum again, and one launch
//   rms_norm_backward_kernel       one block per row: the row's dot (block_sum), dx, plus the
//                                  residual branch's gradient where one is given (one rounding)
//   rms_norm_dgain_partial_kernel  one thread per (column, chunk of rows): the chunk's dgain
//                                  terms summed in row order into workspace[chunk, column]
//   rms_norm_dgain_sum_kernel      one thread per column: the chunks' partials added in chunk
//                                  order, then into dgain
// No atomics: the chunks depend on the row count only (training_launch.hpp), so dgain is the
// same bits on every run and every GPU.
#include "runtime/cuda/detail/block_sum.cuh"
#include "runtime/cuda/detail/device/launch.cuh"
#include "runtime/cuda/detail/training_checks.hpp"
#include "runtime/cuda/detail/training_kernels.hpp"
#include "runtime/cuda/detail/training_launch.hpp"
#include "runtime/training/hd/rms_norm.hpp"

namespace burst::rt::gpu {
namespace {

// x = a, or (kAddFirst) x = a + b rounded to bf16 and stored in `sum`: the bits the separate
// residual_add would have written, normed as rms_norm_forward would norm them. No __restrict__
// on a, b, sum: sum may be a or b (each element is read, then written, by one thread).
template <bool kAddFirst>
__global__ void __launch_bounds__(kTrainThreads)
    rms_norm_forward_kernel(const Bf16* a, const Bf16* b, Bf16* sum, const Bf16* __restrict__ gain, std::int64_t dim,
                            float eps, Bf16* __restrict__ y, float* __restrict__ inv_rms) {
  __shared__ float scratch[kBlockSumScratch<kTrainThreads>];
  const std::int64_t row = blockIdx.x;
  const Bf16* xr = (kAddFirst ? sum : a) + row * dim;
  Bf16* yr = y + row * dim;
  float squares = 0.0f;
  for (std::int64_t j = threadIdx.x; j < dim; j += kTrainThreads) {
    if constexpr (kAddFirst) {
      const std::int64_t at = row * dim + j;
      sum[at] = to_bf16(to_float(a[at]) + to_float(b[at]));
    }
    squares += hd::square_of<float>(to_float(xr[j]));
  }
  const float inv = hd::rms_norm_inverse(block_sum<kTrainThreads>(squares, scratch), dim, eps);
  for (std::int64_t j = threadIdx.x; j < dim; j += kTrainThreads) {
    yr[j] = to_bf16(hd::rms_norm_output(to_float(xr[j]), inv, to_float(gain[j])));
  }
  if (threadIdx.x == 0) inv_rms[row] = inv;
}

__global__ void __launch_bounds__(kTrainThreads)
    rms_norm_backward_kernel(const Bf16* __restrict__ x, const Bf16* __restrict__ gain,
                             const float* __restrict__ inv_rms, const Bf16* __restrict__ dy, const Bf16* skip,
                             std::int64_t dim, Bf16* dx) {
  __shared__ float scratch[kBlockSumScratch<kTrainThreads>];
  const std::int64_t row = blockIdx.x;
  const Bf16* xr = x + row * dim;
  const Bf16* dyr = dy + row * dim;
  Bf16* dxr = dx + row * dim;
  float dot = 0.0f;
  for (std::int64_t j = threadIdx.x; j < dim; j += kTrainThreads) {
    dot += hd::rms_norm_dot_term<float>(to_float(gain[j]), to_float(dyr[j]), to_float(xr[j]));
  }
  const float inv = inv_rms[row];
  const float through_rms = hd::rms_norm_through_rms(inv, block_sum<kTrainThreads>(dot, scratch), dim);
  for (std::int64_t j = threadIdx.x; j < dim; j += kTrainThreads) {
    const float through_norm = hd::rms_norm_dx(inv, through_rms, to_float(gain[j]), to_float(dyr[j]), to_float(xr[j]));
    dxr[j] = to_bf16(skip == nullptr ? through_norm : through_norm + to_float(skip[row * dim + j]));
  }
}

__global__ void __launch_bounds__(kTrainThreads)
    rms_norm_dgain_partial_kernel(const Bf16* __restrict__ x, const float* __restrict__ inv_rms,
                                  const Bf16* __restrict__ dy, std::int64_t rows, std::int64_t dim,
                                  std::int64_t rows_per_chunk, float* __restrict__ workspace) {
  const std::int64_t column = std::int64_t{blockIdx.x} * kTrainThreads + threadIdx.x;
  const std::int64_t chunk = blockIdx.y;
  if (column >= dim) return;
  const std::int64_t first = chunk * rows_per_chunk;
  const std::int64_t last = first + rows_per_chunk < rows ? first + rows_per_chunk : rows;
  float sum = 0.0f;
  for (std::int64_t r = first; r < last; ++r) {
    sum += hd::rms_norm_dgain_term(to_float(dy[r * dim + column]), to_float(x[r * dim + column]), inv_rms[r]);
  }
  workspace[chunk * dim + column] = sum;
}

__global__ void __launch_bounds__(kTrainThreads)
    rms_norm_dgain_sum_kernel(const float* __restrict__ workspace, std::int64_t chunks, std::int64_t dim,
                              float* __restrict__ dgain) {
  const std::int64_t column = std::int64_t{blockIdx.x} * kTrainThreads + threadIdx.x;
  if (column >= dim) return;
  float sum = 0.0f;
  for (std::int64_t c = 0; c < chunks; ++c) sum += workspace[c * dim + column];
  dgain[column] += sum;
}

}  // namespace

std::int64_t rms_norm_workspace_floats(std::int64_t rows, std::int64_t dim) { return dgain_chunks(rows).chunks * dim; }

void rms_norm_forward(const Bf16* x, const Bf16* gain, std::int64_t rows, std::int64_t dim, float eps, Bf16* y,
                      float* inv_rms, cudaStream_t stream) {
  check_rms_norm_forward(x, gain, rows, dim, eps, y, inv_rms);
  if (rows == 0) return;
  launch(rms_norm_forward_kernel<false>, static_cast<unsigned>(rows), kTrainThreads, 0, stream,
         "rms_norm_forward_kernel", x, nullptr, nullptr, gain, dim, eps, y, inv_rms);
}

void add_rms_norm_forward(const ResidualSum& add, const Bf16* gain, std::int64_t rows, std::int64_t dim, float eps,
                          Bf16* y, float* inv_rms, cudaStream_t stream) {
  check_add_rms_norm_forward(add, gain, rows, dim, eps, y, inv_rms);
  if (rows == 0) return;
  launch(rms_norm_forward_kernel<true>, static_cast<unsigned>(rows), kTrainThreads, 0, stream,
         "rms_norm_forward_kernel", add.a, add.b, add.sum, gain, dim, eps, y, inv_rms);
}

void rms_norm_backward(const Bf16* x, const Bf16* gain, const float* inv_rms, const Bf16* dy, const Bf16* skip,
                       std::int64_t rows, std::int64_t dim, Bf16* dx, float* dgain, float* workspace,
                       cudaStream_t stream) {
  check_rms_norm_backward(x, gain, inv_rms, dy, rows, dim, dx, dgain, workspace);
  if (rows == 0) return;
  launch(rms_norm_backward_kernel, static_cast<unsigned>(rows), kTrainThreads, 0, stream, "rms_norm_backward_kernel", x,
         gain, inv_rms, dy, skip, dim, dx);
  const RowChunks chunks = dgain_chunks(rows);
  const auto column_blocks = static_cast<unsigned>(hd::ceil_div(dim, kTrainThreads));
  const dim3 partial_grid(column_blocks, static_cast<unsigned>(chunks.chunks));
  launch(rms_norm_dgain_partial_kernel, partial_grid, kTrainThreads, 0, stream, "rms_norm_dgain_partial_kernel", x,
         inv_rms, dy, rows, dim, chunks.rows_per_chunk, workspace);
  launch(rms_norm_dgain_sum_kernel, column_blocks, kTrainThreads, 0, stream, "rms_norm_dgain_sum_kernel", workspace,
         chunks.chunks, dim, dgain);
}

}  // namespace burst::rt::gpu
