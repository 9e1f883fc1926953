// A deterministic sum over one thread block, for the training kernels' reductions (RMSNorm's
// row sums, the gradient norm's partials). Each warp folds its 32 values with a shuffle
// butterfly, lane 0 of each warp stores its warp's sum, and warp 0 folds those the same way:
// the order of the additions is fixed by the block size alone, so the result is the same bits
// on every run, every GPU and every scheduling of the warps, and no atomics are involved.
//
// Every thread of the block must call it (it synchronises), with a __shared__ scratch of
// kBlockSumScratch<kThreads> values; every thread gets the total.
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

}  // namespace burst::rt::gpu
