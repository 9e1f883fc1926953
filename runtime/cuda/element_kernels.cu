// Element kernels of DeviceKernelMemory (see element_kernels.hpp).
#include "runtime/cuda/detail/element_kernels.hpp"

#include "common/bf16.hpp"
#include "runtime/cuda/detail/device/launch.cuh"

namespace burst::rt::gpu {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::size_t count) {
  const std::size_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 ? blocks : 65535);
}

// sum[i] += src[i]: fp32, and bf16 widened exactly. (Two kernels rather than a template on the
// element type, so the resource test names each by its own name.)
__global__ void __launch_bounds__(kThreads)
    accumulate_f32_kernel(float* __restrict__ sum, const float* __restrict__ src, std::size_t count) {
  for (std::size_t i = std::size_t{blockIdx.x} * kThreads + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * kThreads) {
    sum[i] += src[i];
  }
}

__global__ void __launch_bounds__(kThreads)
    accumulate_bf16_kernel(float* __restrict__ sum, const Bf16* __restrict__ src, std::size_t count) {
  for (std::size_t i = std::size_t{blockIdx.x} * kThreads + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * kThreads) {
    sum[i] += to_float(src[i]);
  }
}

// dst[i] = src[i] rounded to bf16 (nearest even, common/bf16.hpp).
__global__ void __launch_bounds__(kThreads)
    to_bf16_kernel(const float* __restrict__ src, Bf16* __restrict__ dst, std::size_t count) {
  for (std::size_t i = std::size_t{blockIdx.x} * kThreads + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * kThreads) {
    dst[i] = to_bf16(src[i]);
  }
}

// dst[i] = value.
__global__ void __launch_bounds__(kThreads) fill_kernel(float* __restrict__ dst, float value, std::size_t count) {
  for (std::size_t i = std::size_t{blockIdx.x} * kThreads + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * kThreads) {
    dst[i] = value;
  }
}

}  // namespace

void accumulate_on_device(float* sum, const std::byte* src, bool bf16, std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  if (bf16) {
    launch(accumulate_bf16_kernel, blocks_for(count), kThreads, 0, stream, "accumulate_bf16_kernel", sum,
           reinterpret_cast<const Bf16*>(src), count);
  } else {
    launch(accumulate_f32_kernel, blocks_for(count), kThreads, 0, stream, "accumulate_f32_kernel", sum,
           reinterpret_cast<const float*>(src), count);
  }
}

void to_bf16_on_device(const float* src, std::byte* dst, std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  launch(to_bf16_kernel, blocks_for(count), kThreads, 0, stream, "to_bf16_kernel", src, reinterpret_cast<Bf16*>(dst),
         count);
}

void fill_on_device(float* dst, float value, std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  launch(fill_kernel, blocks_for(count), kThreads, 0, stream, "fill_kernel", dst, value, count);
}

}  // namespace burst::rt::gpu
