// Host memory for the CPU kernels (see kernel_memory.hpp).
#include "runtime/kernels/kernel_memory.hpp"

#include <algorithm>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "common/bf16.hpp"
#include "common/error.hpp"

namespace burst::rt {
namespace {

constexpr std::align_val_t kAlignment{64};

void free_host(std::byte* p, void*) { ::operator delete[](p, kAlignment); }

// Element i of a bf16 run, widened exactly.
float bf16_at(const std::byte* src, std::size_t i) {
  Bf16 b;
  std::memcpy(&b, src + i * sizeof(Bf16), sizeof(Bf16));
  return to_float(b);
}

void put_bf16(std::byte* dst, std::size_t i, float value) {
  const Bf16 b = to_bf16(value);
  std::memcpy(dst + i * sizeof(Bf16), &b, sizeof(Bf16));
}

}  // namespace

void require_tensor_dtype(DType dtype, const char* call) {
  if (dtype == DType::F32 || dtype == DType::BF16) return;
  throw Error(Problem{call, fmt::format("a tensor stored as {}", to_string(dtype)), "fp32, bf16", ""});
}

OutOfKernelMemory::OutOfKernelMemory(MemorySpace space, std::size_t bytes, std::string_view detail)
    : Error(Problem{space == MemorySpace::Device ? "device memory" : "host memory",
                    fmt::format("out of memory allocating {} bytes ({})", bytes, detail), "", ""}),
      space_(space),
      bytes_(bytes) {}

MemoryBlock HostKernelMemory::allocate(std::size_t bytes) {
  try {
    return {static_cast<std::byte*>(::operator new[](std::max<std::size_t>(bytes, 1), kAlignment)),
            bytes,
            {free_host, nullptr}};
  } catch (const std::bad_alloc&) {
    throw OutOfKernelMemory(MemorySpace::Host, bytes, "operator new");
  }
}

void HostKernelMemory::store(std::span<const float> values, DType dtype, std::byte* dst) {
  require_tensor_dtype(dtype, "HostKernelMemory::store");
  if (dtype == DType::F32) {
    if (!values.empty()) std::memcpy(dst, values.data(), values.size_bytes());
    return;
  }
  for (std::size_t i = 0; i < values.size(); ++i) put_bf16(dst, i, values[i]);
}

void HostKernelMemory::load(const std::byte* src, DType dtype, std::span<float> values) {
  require_tensor_dtype(dtype, "HostKernelMemory::load");
  if (dtype == DType::F32) {
    if (!values.empty()) std::memcpy(values.data(), src, values.size_bytes());
    return;
  }
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = bf16_at(src, i);
}

void HostKernelMemory::zero(std::byte* dst, std::size_t bytes) {
  if (bytes > 0) std::memset(dst, 0, bytes);
}

void HostKernelMemory::fill(float* dst, float value, std::size_t count) { std::fill_n(dst, count, value); }

void HostKernelMemory::accumulate(float* sum, const std::byte* src, DType dtype, std::size_t count) {
  require_tensor_dtype(dtype, "HostKernelMemory::accumulate");
  for (std::size_t i = 0; i < count; ++i) {
    float value = 0;
    if (dtype == DType::F32) {
      std::memcpy(&value, src + i * sizeof(float), sizeof(float));
    } else {
      value = bf16_at(src, i);
    }
    sum[i] += value;
  }
}

void HostKernelMemory::convert(const float* src, DType dtype, std::byte* dst, std::size_t count) {
  store(std::span<const float>(src, count), dtype, dst);
}

void HostKernelMemory::copy_rows(std::byte* dst, std::size_t dst_pitch, const std::byte* src, std::size_t src_pitch,
                                 std::size_t row_bytes, std::size_t rows) {
  if (row_bytes == 0) return;
  for (std::size_t r = 0; r < rows; ++r) std::memcpy(dst + r * dst_pitch, src + r * src_pitch, row_bytes);
}

}  // namespace burst::rt
