// TMA tensor maps of the attention operands (host side of the Hopper path): a bf16
// [tokens, heads, head_dim] tensor seen as the 3-d tensor (head_dim, heads, tokens), loaded in
// boxes of 64 head-dim elements x 1 head x `box_rows` tokens with the 128-byte swizzle of
// wgmma_layout.hpp; tokens past the end read as zeros. The map is encoded on the host by the
// driver's cuTensorMapEncodeTiled (reached through the runtime's driver entry point, so nothing
// links libcuda) and passed to the kernel by value (a __grid_constant__ parameter).
#pragma once

#include <cstdint>
#include <string_view>

#include <cuda.h>

#include "common/bf16.hpp"

namespace burst::rt::gpu {

// Throws burst::Error naming `what` and the driver's result when the driver refuses the map
// (an unaligned address, a dimension out of range).
[[nodiscard]] CUtensorMap bf16_token_map(const Bf16* base, std::int64_t tokens, std::int64_t heads,
                                         std::int64_t head_dim, int box_rows, std::string_view what);

}  // namespace burst::rt::gpu
