#include "runtime/cuda/detail/tensor_map.hpp"

#include <algorithm>
#include <array>
#include <string>

#include <cudaTypedefs.h>
#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/detail/wgmma_layout.hpp"

namespace burst::rt::gpu {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult found{};
    check_cuda(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry, 12000, cudaEnableDefault, &found),
               "cudaGetDriverEntryPointByVersion(cuTensorMapEncodeTiled)");
    if (found != cudaDriverEntryPointSuccess || entry == nullptr) {
      throw Error(Problem{"cuTensorMapEncodeTiled", "the CUDA driver does not provide it",
                          "a driver for CUDA 12.0 or later",
                          "or run the mma.sync kernel path (--kernel-path mma.sync)"});
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(entry);
  }();
  return fn;
}

}  // namespace

CUtensorMap bf16_token_map(const Bf16* base, std::int64_t tokens, std::int64_t heads, std::int64_t head_dim,
                           int box_rows, std::string_view what) {
  constexpr std::uint64_t kBytes = sizeof(Bf16);
  // A map of no tokens is never read (no tile refers to it) but must still encode: one row.
  const std::array<cuuint64_t, 3> dims{static_cast<cuuint64_t>(head_dim), static_cast<cuuint64_t>(heads),
                                       static_cast<cuuint64_t>(std::max<std::int64_t>(tokens, 1))};
  const std::array<cuuint64_t, 2> strides{static_cast<cuuint64_t>(head_dim) * kBytes,
                                          static_cast<cuuint64_t>(heads * head_dim) * kBytes};
  const std::array<cuuint32_t, 3> box{static_cast<cuuint32_t>(wgmma::kTileCols), 1, static_cast<cuuint32_t>(box_rows)};
  const std::array<cuuint32_t, 3> element_strides{1, 1, 1};
  CUtensorMap map{};
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): the driver's signature is not const-correct
  void* address = const_cast<Bf16*>(base);
  const CUresult result =
      encode_tiled()(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, address, dims.data(), strides.data(), box.data(),
                     element_strides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                     CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    throw Error(Problem{
        fmt::format("cuTensorMapEncodeTiled({})", what),
        fmt::format("CUresult {} for {} tokens x {} heads x {} at {}, boxes of {} rows", static_cast<int>(result),
                    tokens, heads, head_dim, static_cast<const void*>(base), box_rows),
        "a 16-byte aligned address and fewer than 2^32 tokens", ""});
  }
  return map;
}

}  // namespace burst::rt::gpu
