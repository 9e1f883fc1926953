// The optimizer's kernels (training_kernels.hpp):
//   squared_norm_partial_kernel  norm_blocks(count) blocks; thread (b, t) adds the squares of
//                                elements b * 256 + t + k * blocks * 256 (k = 0, 1, ...) in
//                                double, block_sum folds the block: one partial per block
//   squared_norm_sum_kernel      one block folds the partials the same way into *result
//   adamw_kernel                 one thread per parameter (grid-stride): the clipped gradient,
//                                the element update of runtime/training/hd/adamw_element.hpp
//                                in float, the bf16 working copy rewritten
// The block count depends on the element count only, so the norm is the same bits on every
// run and GPU; no atomics anywhere.
#include "runtime/cuda/detail/block_sum.cuh"
#include "runtime/cuda/detail/device/launch.cuh"
#include "runtime/cuda/detail/training_checks.hpp"
#include "runtime/cuda/detail/training_kernels.hpp"
#include "runtime/cuda/detail/training_launch.hpp"
#include "runtime/training/hd/rms_norm.hpp"

namespace burst::rt::gpu {
namespace {

__global__ void __launch_bounds__(kTrainThreads)
    squared_norm_partial_kernel(const float* __restrict__ grads, std::int64_t count, double* __restrict__ partials) {
  __shared__ double scratch[kBlockSumScratch<kTrainThreads>];
  double sum = 0.0;
  const std::int64_t stride = std::int64_t{gridDim.x} * kTrainThreads;
  for (std::int64_t i = std::int64_t{blockIdx.x} * kTrainThreads + threadIdx.x; i < count; i += stride) {
    sum += hd::square_of<double>(grads[i]);
  }
  sum = block_sum<kTrainThreads>(sum, scratch);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

__global__ void __launch_bounds__(kTrainThreads)
    squared_norm_sum_kernel(const double* __restrict__ partials, std::int64_t blocks, double* __restrict__ result) {
  __shared__ double scratch[kBlockSumScratch<kTrainThreads>];
  double sum = 0.0;
  for (std::int64_t b = threadIdx.x; b < blocks; b += kTrainThreads) sum += partials[b];
  sum = block_sum<kTrainThreads>(sum, scratch);
  if (threadIdx.x == 0) *result = sum;
}

__global__ void __launch_bounds__(kTrainThreads)
    adamw_kernel(float* __restrict__ params, const float* __restrict__ grads, float* __restrict__ m,
                 float* __restrict__ v, Bf16* __restrict__ working, std::int64_t count, hd::AdamWScalars<float> scalars,
                 float clip_factor) {
  const std::int64_t stride = std::int64_t{gridDim.x} * kTrainThreads;
  for (std::int64_t i = std::int64_t{blockIdx.x} * kTrainThreads + threadIdx.x; i < count; i += stride) {
    const hd::AdamWElement next = hd::adamw_element(scalars, grads[i] * clip_factor, {params[i], m[i], v[i]});
    params[i] = next.param;
    m[i] = next.m;
    v[i] = next.v;
    working[i] = to_bf16(next.param);
  }
}

}  // namespace

std::int64_t squared_norm_workspace_doubles(std::int64_t count) { return norm_blocks(count); }

void squared_norm(const float* grads, std::int64_t count, double* workspace, double* result, cudaStream_t stream) {
  check_squared_norm(grads, count, workspace, result);
  const std::int64_t blocks = norm_blocks(count);
  launch(squared_norm_partial_kernel, static_cast<unsigned>(blocks), kTrainThreads, 0, stream,
         "squared_norm_partial_kernel", grads, count, workspace);
  launch(squared_norm_sum_kernel, 1, kTrainThreads, 0, stream, "squared_norm_sum_kernel", workspace, blocks, result);
}

void adamw_update(const AdamWDeviceRange& range, const hd::AdamWScalars<float>& scalars, float clip_factor,
                  cudaStream_t stream) {
  check_adamw(range, scalars, clip_factor);
  if (range.count == 0) return;
  launch(adamw_kernel, elementwise_blocks(range.count), kTrainThreads, 0, stream, "adamw_kernel", range.params,
         range.grads, range.m, range.v, range.working, range.count, scalars, clip_factor);
}

}  // namespace burst::rt::gpu
