// A deterministic sum (or maximum) over one thread block, for the training kernels' reductions
// (RMSNorm's row sums, the gradient norm's partials, the cross-entropy's row maximum and sum).
// Each warp folds its 32 values with a shuffle butterfly, lane 0 of each warp stores its warp's
// result, and warp 0 folds those the same way: the order of the operations is fixed by the
// block size alone, so the result is the same bits on every run, every GPU and every
// scheduling of the warps, and no atomics are involved.
//
// Every thread of the block must call it (it synchronises), with a __shared__ scratch of
// kBlockSumScratch<kThreads> values; every thread gets the result.
#pragma once

namespace burst::rt::gpu {

template <int kThreads>
inline constexpr int kBlockSumScratch = kThreads / 32 + 1;

template <int kThreads, typename T>
__device__ T block_sum(T value, T* scratch) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 32 of them");
  constexpr int kWarps = kThreads / 32;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  if (warp == 0) {
    T total = lane < kWarps ? scratch[lane] : T(0);
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) total += __shfl_xor_sync(0xffffffffu, total, offset);
    if (lane == 0) scratch[kWarps] = total;
  }
  __syncthreads();
  const T total = scratch[kWarps];
  __syncthreads();  // the scratch may be reused by the next call
  return total;
}

// The largest `value` of the block (fmaxf: a NaN loses to a number, as in fmax).
template <int kThreads>
__device__ float block_max(float value, float* scratch) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 32 of them");
  constexpr int kWarps = kThreads / 32;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  if (warp == 0) {
    float top = scratch[lane < kWarps ? lane : 0];  // lanes past the warps repeat warp 0's maximum
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) top = fmaxf(top, __shfl_xor_sync(0xffffffffu, top, offset));
    if (lane == 0) scratch[kWarps] = top;
  }
  __syncthreads();
  const float top = scratch[kWarps];
  __syncthreads();  // the scratch may be reused by the next call
  return top;
}

}  // namespace burst::rt::gpu
