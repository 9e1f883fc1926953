// Argument checks of the CUDA kernels (see flash_checks.hpp).
#include "runtime/cuda/detail/flash_checks.hpp"

#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/cuda/detail/kernel_traits.hpp"
#include "runtime/kernels/hd/index_math.hpp"

namespace burst::rt::gpu {
namespace {

std::string where(std::string_view call, std::string_view name) { return fmt::format("{}: {}", call, name); }

void check_shape(Problems& p, std::string_view call, const PairShape& s) {
  if (s.q_tokens < 0 || s.k_tokens < 0) {
    p.add(where(call, "shape"), fmt::format("{} query and {} key tokens", s.q_tokens, s.k_tokens), "tokens >= 0");
  }
  if (s.head_dim != 64 && s.head_dim != 128) {
    p.add(where(call, "head_dim"), fmt::format("head_dim {}", s.head_dim), "64 or 128",
          "the CUDA kernels are compiled for these two; use the CPU kernels (--device cpu) for others");
  }
  if (s.heads < 1 || s.kv_heads < 1 || s.heads % s.kv_heads != 0) {
    p.add(where(call, "heads"), fmt::format("{} query heads over {} kv heads", s.heads, s.kv_heads),
          "heads >= 1, kv_heads >= 1, kv_heads dividing heads");
  }
  if (s.heads > 65535) p.add(where(call, "heads"), fmt::format("{} heads", s.heads), "at most 65535 (grid.y)");
}

void check_mask(Problems& p, std::string_view call, const hd::MaskView& m) {
  if (m.base == hd::BaseMask::Sliding && m.window < 1) {
    p.add(where(call, "mask"), fmt::format("sliding window of {} tokens", m.window), "window >= 1");
  }
  if (m.base == hd::BaseMask::Document && m.doc_len < 1) {
    p.add(where(call, "mask"), fmt::format("documents of {} tokens", m.doc_len), "doc_len >= 1");
  }
  if (m.sparse != nullptr && (m.block < 1 || m.blocks < 1)) {
    p.add(where(call, "mask.sparse"), fmt::format("{} blocks of {} tokens", m.blocks, m.block),
          "block >= 1 and blocks >= 1");
  }
}

// One walk of the lists: `blocks` blocks of block_rows over `tokens` rows.
void check_walk(Problems& p, std::string_view call, std::string_view name, const DeviceTileWalk& walk,
                std::int64_t tokens, int block_rows) {
  const std::int64_t blocks = hd::tile_count(tokens, block_rows);
  if (walk.blocks != blocks) {
    p.add(where(call, name), fmt::format("{} blocks for {} tokens", walk.blocks, tokens),
          fmt::format("{} blocks of {} rows", blocks, block_rows),
          "build the lists with build_kernel_tile_lists (tile_list.hpp)");
  }
  if (walk.blocks > std::numeric_limits<std::int32_t>::max()) {
    p.add(where(call, name), fmt::format("{} blocks", walk.blocks), "fewer than 2^31");
  }
  need(p, call, fmt::format("{}.offsets", name), walk.offsets, walk.blocks);
}

void check_tiles(Problems& p, std::string_view call, const PairShape& s, const DeviceTileList& t) {
  check_walk(p, call, "tiles.by_query", t.by_query, s.q_tokens, kQueryBlockRows);
  check_walk(p, call, "tiles.by_key", t.by_key, s.k_tokens, kKeyBlockRows);
  check_walk(p, call, "tiles.by_wide_key", t.by_wide_key, s.k_tokens, kWideKeyBlockRows);
}

void add_pair_problems(Problems& p, std::string_view call, const PairInputs& in) {
  const PairShape& s = in.shape;
  check_shape(p, call, s);
  check_mask(p, call, in.mask);
  check_tiles(p, call, s, in.tiles);
  need(p, call, "q", in.q, s.q_tokens);
  need(p, call, "q_positions", in.q_positions, s.q_tokens);
  need(p, call, "k", in.k, s.k_tokens);
  need(p, call, "v", in.v, s.k_tokens);
  need(p, call, "k_positions", in.k_positions, s.k_tokens);
}

}  // namespace

void need(Problems& p, std::string_view call, std::string_view name, const void* pointer, std::int64_t elements) {
  if (pointer == nullptr && elements > 0) p.add(where(call, name), fmt::format("null for {} elements", elements));
}

void check_forward_inputs(const PairInputs& in, const float* o, const float* lse) {
  constexpr std::string_view kCall = "flash_forward";
  Problems p;
  add_pair_problems(p, kCall, in);
  need(p, kCall, "o", o, in.shape.q_tokens);
  need(p, kCall, "lse", lse, in.shape.q_tokens);
  p.throw_if_any();
}

void check_backward_inputs(const PairInputs& in, const BackwardInputs& grad_in, const Gradients& out) {
  constexpr std::string_view kCall = "flash_backward";
  Problems p;
  add_pair_problems(p, kCall, in);
  const PairShape& s = in.shape;
  need(p, kCall, "d_o", grad_in.d_o, s.q_tokens);
  need(p, kCall, "lse", grad_in.lse, s.q_tokens);
  need(p, kCall, "delta", grad_in.delta, s.q_tokens);
  need(p, kCall, "d_q", out.d_q, s.q_tokens);
  need(p, kCall, "d_k", out.d_k, s.k_tokens);
  need(p, kCall, "d_v", out.d_v, s.k_tokens);
  p.throw_if_any();
}

void check_row_kernel(std::string_view call, std::int64_t rows, std::int64_t head_dim, const void* a, const void* b,
                      const void* c, const void* d) {
  Problems p;
  if (rows < 0 || head_dim < 1) {
    p.add(where(call, "shape"), fmt::format("{} rows of {} values", rows, head_dim), "rows >= 0, head_dim >= 1");
  }
  if (rows > std::numeric_limits<std::int32_t>::max()) {
    p.add(where(call, "rows"), fmt::format("{} rows", rows), "fewer than 2^31 (tokens * heads)");
  }
  for (const void* pointer : {a, b, c, d}) {
    if (pointer == nullptr && rows > 0) {
      p.add(where(call, "pointers"), "a device pointer is null");
      break;
    }
  }
  p.throw_if_any();
}

}  // namespace burst::rt::gpu
