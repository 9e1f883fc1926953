// Argument checks of the kernel entry points (see checks.hpp).
#include "runtime/kernels/checks.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace burst::rt {
namespace {

std::string where(std::string_view call, std::string_view name) { return fmt::format("{}: {}", call, name); }

std::string describe(const Shape& s) { return fmt::format("[{}, {}, {}]", s.tokens, s.heads, s.head_dim); }

std::string divisors(std::int64_t n) {
  std::vector<std::string> list;
  for (std::int64_t k = 1; k <= n; ++k) {
    if (n % k == 0) list.push_back(std::to_string(k));
  }
  return fmt::format("{}", fmt::join(list, ", "));
}

void check_tensor(Problems& p, std::string_view call, std::string_view name, ConstView t) {
  if (t.shape.tokens < 0 || t.shape.heads < 1 || t.shape.head_dim < 1) {
    p.add(where(call, name), fmt::format("shape {} is not a tensor", describe(t.shape)),
          "[tokens >= 0, heads >= 1, head_dim >= 1]");
  } else if (t.data == nullptr && t.shape.tokens > 0) {
    p.add(where(call, name), fmt::format("shape {} but no data", describe(t.shape)));
  }
}

void check_positions(Problems& p, std::string_view call, std::string_view name, std::span<const std::int64_t> pos,
                     std::int64_t tokens, const BlockSparse* table) {
  if (static_cast<std::int64_t>(pos.size()) != tokens) {
    p.add(where(call, name), fmt::format("{} positions for {} tokens", pos.size(), tokens),
          "one global position per token row");
    return;
  }
  if (pos.empty()) return;
  const PositionRange r = range_of(pos);
  if (r.lo < 0) p.add(where(call, name), fmt::format("position {} is negative", r.lo), "positions >= 0");
  if (table != nullptr && r.hi >= table->blocks * table->block) {
    p.add(where(call, name),
          fmt::format("position {} lies beyond the block-sparse table ({} blocks of {} tokens)", r.hi, table->blocks,
                      table->block),
          fmt::format("positions < {}", table->blocks * table->block), "make the table cover the whole sequence");
  }
}

// Returns the block-sparse table when there is a well-formed one.
const BlockSparse* check_mask(Problems& p, std::string_view call, const AttentionMask& mask) {
  if (mask.base.kind == MaskKind::SlidingWindow && mask.base.window < 1) {
    p.add(where(call, "mask"), fmt::format("sliding window of {} tokens", mask.base.window), "window >= 1");
  }
  if (mask.base.kind == MaskKind::Document && mask.base.doc_len < 1) {
    p.add(where(call, "mask"), fmt::format("documents of {} tokens", mask.base.doc_len), "doc_len >= 1");
  }
  if (!mask.sparse) return nullptr;
  const BlockSparse& s = *mask.sparse;
  if (s.block < 1 || s.blocks < 1) {
    p.add(where(call, "mask.sparse"), fmt::format("{} blocks of {} tokens", s.blocks, s.block),
          "block >= 1 and blocks >= 1");
    return nullptr;
  }
  if (static_cast<std::int64_t>(s.allowed.size()) != s.blocks * s.blocks) {
    p.add(where(call, "mask.sparse"), fmt::format("table of {} entries for {} blocks", s.allowed.size(), s.blocks),
          fmt::format("blocks * blocks = {} entries", s.blocks * s.blocks), "build it with BlockSparse::from");
    return nullptr;
  }
  return &s;
}

}  // namespace

void check_pair(Problems& p, std::string_view call, const BlockPair& in, const AttentionMask& mask,
                const KernelOptions& options) {
  check_tensor(p, call, "q", in.q);
  check_tensor(p, call, "k", in.k);
  check_shape(p, call, "v", in.v.shape, in.k.shape, "k");
  if (in.v.data == nullptr && in.v.shape.tokens > 0) p.add(where(call, "v"), "no data");
  if (in.k.shape.head_dim != in.q.shape.head_dim) {
    p.add(where(call, "k"), fmt::format("head_dim {} but q has {}", in.k.shape.head_dim, in.q.shape.head_dim),
          "the same head_dim as q");
  }
  if (in.q.shape.heads >= 1 && in.k.shape.heads >= 1 && in.q.shape.heads % in.k.shape.heads != 0) {
    p.add(where(call, "k"),
          fmt::format("{} kv heads do not divide the {} query heads", in.k.shape.heads, in.q.shape.heads),
          fmt::format("kv heads dividing {}: {}", in.q.shape.heads, divisors(in.q.shape.heads)),
          "grouped-query attention shares each kv head among heads / kv_heads query heads");
  }
  const BlockSparse* table = check_mask(p, call, mask);
  check_positions(p, call, "q_positions", in.q_positions, in.q.shape.tokens, table);
  check_positions(p, call, "k_positions", in.k_positions, in.k.shape.tokens, table);
  if (options.tile_q < 1 || options.tile_k < 1) {
    p.add(where(call, "options"), fmt::format("tiles of {} x {}", options.tile_q, options.tile_k),
          "tile_q >= 1 and tile_k >= 1", "128 x 128 suits OpenBLAS");
  }
  if (options.threads < 0) {
    p.add(where(call, "options"), fmt::format("{} threads", options.threads), "threads >= 1, or 0 for one per core");
  }
}

void check_shape(Problems& p, std::string_view call, std::string_view name, const Shape& got, const Shape& want,
                 std::string_view like) {
  if (got != want) {
    p.add(where(call, name), fmt::format("shape {} differs from {} {}", describe(got), like, describe(want)),
          fmt::format("the shape of {}", like));
  }
}

void check_row_scalars(Problems& p, std::string_view call, std::string_view name, std::size_t got,
                       const Shape& rows_of) {
  const std::int64_t want = rows_of.tokens * rows_of.heads;
  if (static_cast<std::int64_t>(got) != want) {
    p.add(where(call, name), fmt::format("{} values", got),
          fmt::format("tokens * heads = {} * {} = {}", rows_of.tokens, rows_of.heads, want));
  }
}

void check_forward_outputs(Problems& problems, std::string_view call, const BlockPair& in, const Shape& o,
                           std::size_t lse) {
  check_shape(problems, call, "o", o, in.q.shape, "q");
  check_row_scalars(problems, call, "lse", lse, in.q.shape);
}

void check_backward_arguments(Problems& problems, std::string_view call, const BlockPair& in, const Shape& d_o,
                              std::size_t delta, std::size_t lse, const Shape& d_q, const Shape& d_k,
                              const Shape& d_v) {
  check_shape(problems, call, "d_o", d_o, in.q.shape, "q");
  check_shape(problems, call, "d_q", d_q, in.q.shape, "q");
  check_shape(problems, call, "d_k", d_k, in.k.shape, "k");
  check_shape(problems, call, "d_v", d_v, in.k.shape, "k");
  check_row_scalars(problems, call, "delta", delta, in.q.shape);
  check_row_scalars(problems, call, "lse", lse, in.q.shape);
}

}  // namespace burst::rt
