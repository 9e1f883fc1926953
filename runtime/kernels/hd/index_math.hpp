// Index arithmetic shared by the CPU kernels, the host tile lists and the CUDA kernels.
//
// Tensors are [tokens, heads, head_dim] row-major, so the row of (token t, head h) is number
// t * heads + h, which is also the index of its per-row scalars (lse, D). Grouped-query
// attention shares each kv head among heads / kv_heads consecutive query heads: query head h
// reads kv head h / (heads / kv_heads). Rows are cut into tiles of a fixed size, the last one
// possibly short: ceil(rows / tile) tiles.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"

namespace burst::rt::hd {

BURST_HOST_DEVICE constexpr std::int64_t ceil_div(std::int64_t n, std::int64_t d) { return (n + d - 1) / d; }

BURST_HOST_DEVICE constexpr std::int64_t tile_count(std::int64_t rows, std::int64_t tile) {
  return ceil_div(rows, tile);
}

BURST_HOST_DEVICE constexpr std::int64_t kv_head_of(std::int64_t head, std::int64_t heads, std::int64_t kv_heads) {
  return head / (heads / kv_heads);
}

BURST_HOST_DEVICE constexpr std::int64_t row_index(std::int64_t token, std::int64_t heads, std::int64_t head) {
  return token * heads + head;
}

}  // namespace burst::rt::hd
