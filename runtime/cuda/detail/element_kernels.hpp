// The element kernels of DeviceKernelMemory (device_kernel_memory.hpp): grid-stride loops on
// `stream`, launched and checked (check_launch), not waited for.
//   accumulate_on_device  sum[i] += src[i], src fp32 or bf16 (widened exactly)
//   to_bf16_on_device     dst[i] = src[i] rounded to bf16, nearest even (common/bf16.hpp)
//   fill_on_device        dst[i] = value (fp32)
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

namespace burst::rt::gpu {

void accumulate_on_device(float* sum, const std::byte* src, bool bf16, std::size_t count, cudaStream_t stream);
void to_bf16_on_device(const float* src, std::byte* dst, std::size_t count, cudaStream_t stream);
void fill_on_device(float* dst, float value, std::size_t count, cudaStream_t stream);

}  // namespace burst::rt::gpu
