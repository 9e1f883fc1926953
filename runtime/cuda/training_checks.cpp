// Argument checks of the training kernels (see training_checks.hpp).
#include "runtime/cuda/detail/training_checks.hpp"

#include <cmath>
#include <initializer_list>
#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/cuda/detail/flash_checks.hpp"
#include "runtime/training/argument_checks.hpp"

namespace burst::rt::gpu {
namespace {

constexpr std::int64_t kMaxGrid = std::numeric_limits<std::int32_t>::max();  // grid.x

// Rows launched one block each: grid.x holds fewer than 2^31.
void check_block_rows(Problems& p, std::string_view call, std::string_view name, std::int64_t rows) {
  check_at_least(p, call, name, rows, 0);
  if (rows > kMaxGrid) p.add(where(call, name), fmt::format("{} {}", rows, name), "fewer than 2^31 (grid.x)");
}

}  // namespace

void check_embedding_forward(const std::int32_t* tokens, std::int64_t count, const Bf16* table, std::int64_t vocab,
                             std::int64_t dim, const Bf16* out) {
  constexpr std::string_view call = "embedding_forward";
  Problems p;
  check_block_rows(p, call, "count", count);
  check_at_least(p, call, "vocab", vocab, 1);
  check_at_least(p, call, "dim", dim, 1);
  need(p, call, "tokens", tokens, count);
  need(p, call, "table", table, vocab * dim);
  need(p, call, "out", out, count * dim);
  p.throw_if_any();
}

void check_embedding_backward(const DeviceTokenGroups& groups, const Bf16* dout, std::int64_t vocab, std::int64_t dim,
                              const float* dtable) {
  constexpr std::string_view call = "embedding_backward";
  Problems p;
  check_block_rows(p, call, "groups.groups", groups.groups);
  check_at_least(p, call, "groups.tokens", groups.tokens, 0);
  if (groups.groups > groups.tokens || (groups.tokens > 0 && groups.groups == 0)) {
    p.add(where(call, "groups"), fmt::format("{} groups of {} tokens", groups.groups, groups.tokens),
          "between 1 and tokens groups (one per distinct token id)", "build them with group_tokens()");
  }
  check_at_least(p, call, "vocab", vocab, 1);
  check_at_least(p, call, "dim", dim, 1);
  if (groups.groups > vocab) {
    p.add(where(call, "groups"), fmt::format("{} distinct ids in a vocabulary of {}", groups.groups, vocab),
          "at most vocab groups");
  }
  need(p, call, "groups.rows", groups.rows, groups.groups);
  need(p, call, "groups.offsets", groups.offsets, groups.groups > 0 ? groups.groups + 1 : 0);
  need(p, call, "groups.token_index", groups.token_index, groups.tokens);
  need(p, call, "dout", dout, groups.tokens * dim);
  need(p, call, "dtable", dtable, groups.groups > 0 ? vocab * dim : 0);
  p.throw_if_any();
}

void check_rms_norm_forward(const Bf16* x, const Bf16* gain, std::int64_t rows, std::int64_t dim, float eps,
                            const Bf16* y, const float* inv_rms) {
  constexpr std::string_view call = "rms_norm_forward";
  Problems p;
  check_block_rows(p, call, "rows", rows);
  check_at_least(p, call, "dim", dim, 1);
  if (!(eps > 0.0f)) p.add(where(call, "eps"), fmt::format("eps {}", eps), "eps > 0", "Llama uses 1e-5");
  const std::int64_t elements = rows * dim, per_row = rows > 0 ? dim : 0;
  need(p, call, "x", x, elements);
  need(p, call, "gain", gain, per_row);
  need(p, call, "y", y, elements);
  need(p, call, "inv_rms", inv_rms, rows);
  p.throw_if_any();
}

void check_add_rms_norm_forward(const ResidualSum& add, const Bf16* gain, std::int64_t rows, std::int64_t dim,
                                float eps, const Bf16* y, const float* inv_rms) {
  constexpr std::string_view call = "add_rms_norm_forward";
  Problems p;
  const std::int64_t elements = rows * dim;
  need(p, call, "a", add.a, elements);
  need(p, call, "b", add.b, elements);
  p.throw_if_any();
  check_rms_norm_forward(add.sum, gain, rows, dim, eps, y, inv_rms);
}

void check_rms_norm_backward(const Bf16* x, const Bf16* gain, const float* inv_rms, const Bf16* dy, std::int64_t rows,
                             std::int64_t dim, const Bf16* dx, const float* dgain, const float* workspace) {
  constexpr std::string_view call = "rms_norm_backward";
  Problems p;
  check_block_rows(p, call, "rows", rows);
  check_at_least(p, call, "dim", dim, 1);
  const std::int64_t elements = rows * dim, per_row = rows > 0 ? dim : 0;
  need(p, call, "x", x, elements);
  need(p, call, "gain", gain, per_row);
  need(p, call, "inv_rms", inv_rms, rows);
  need(p, call, "dy", dy, elements);
  need(p, call, "dx", dx, elements);
  need(p, call, "dgain", dgain, per_row);
  need(p, call, "workspace", workspace, rms_norm_workspace_floats(rows, dim));
  p.throw_if_any();
}

void check_rope(std::string_view call, const RopeArgs& a) {
  Problems p;
  check_at_least(p, call, "tokens", a.tokens, 0);
  check_at_least(p, call, "heads", a.heads, 1);
  if (a.head_dim < 2 || a.head_dim % 2 != 0) {
    p.add(where(call, "head_dim"), fmt::format("head_dim {}", a.head_dim), "an even head_dim >= 2",
          "rotary embedding turns pairs (i, i + head_dim / 2)");
  }
  if (!(a.base > 1.0f)) p.add(where(call, "base"), fmt::format("base {}", a.base), "base > 1", "Llama uses 10000");
  check_at_least(p, call, "k_heads", a.k_heads, 0);
  need(p, call, "x", a.x, a.tokens * a.heads * a.head_dim);
  need(p, call, "k", a.k, a.tokens * a.k_heads * a.head_dim);
  need(p, call, "positions", a.positions, a.tokens);
  p.throw_if_any();
}

void check_elementwise(std::string_view call, std::int64_t count, std::initializer_list<NamedArray> arrays) {
  Problems p;
  check_at_least(p, call, "count", count, 0);
  for (const NamedArray& a : arrays) need(p, call, a.name, a.pointer, count);
  p.throw_if_any();
}

void check_cross_entropy(std::string_view call, const float* logits, std::int64_t rows, std::int64_t vocab,
                         const std::int32_t* targets, NamedArray out, std::int64_t out_elements) {
  Problems p;
  check_at_least(p, call, "rows", rows, 0);
  check_at_least(p, call, "vocab", vocab, 1);
  if (vocab > std::numeric_limits<std::int32_t>::max()) {
    p.add(where(call, "vocab"), fmt::format("vocab {}", vocab), "below 2^31", "targets are int32 ids");
  }
  need(p, call, "logits", logits, rows * vocab);
  need(p, call, "targets", targets, rows);
  need(p, call, out.name, out.pointer, out_elements);
  p.throw_if_any();
}

void check_squared_norm(const float* grads, std::int64_t count, const double* workspace, const double* result) {
  constexpr std::string_view call = "squared_norm";
  Problems p;
  check_at_least(p, call, "count", count, 0);
  need(p, call, "grads", grads, count);
  need(p, call, "workspace", workspace, squared_norm_workspace_doubles(count));
  need(p, call, "result", result, 1);
  p.throw_if_any();
}

void check_adamw(const AdamWDeviceRange& r, const hd::AdamWScalars<float>& s, float clip_factor) {
  constexpr std::string_view call = "adamw_update";
  Problems p;
  check_at_least(p, call, "range.count", r.count, 0);
  need(p, call, "range.params", r.params, r.count);
  need(p, call, "range.grads", r.grads, r.count);
  need(p, call, "range.m", r.m, r.count);
  need(p, call, "range.v", r.v, r.count);
  need(p, call, "range.working", r.working, r.count);
  if (!(s.lr >= 0.0f)) p.add(where(call, "scalars.lr"), fmt::format("lr {}", s.lr), "lr >= 0");
  if (!(s.beta1 >= 0.0f && s.beta1 < 1.0f)) {
    p.add(where(call, "scalars.beta1"), fmt::format("beta1 {}", s.beta1), "0 <= beta1 < 1");
  }
  if (!(s.beta2 >= 0.0f && s.beta2 < 1.0f)) {
    p.add(where(call, "scalars.beta2"), fmt::format("beta2 {}", s.beta2), "0 <= beta2 < 1");
  }
  if (!(s.eps > 0.0f)) p.add(where(call, "scalars.eps"), fmt::format("eps {}", s.eps), "eps > 0");
  if (!(s.decay >= 0.0f)) p.add(where(call, "scalars.decay"), fmt::format("decay {}", s.decay), "decay >= 0");
  if (!(s.correction1 > 0.0f && s.correction1 <= 1.0f && s.correction2 > 0.0f && s.correction2 <= 1.0f)) {
    p.add(where(call, "scalars.correction"), fmt::format("bias corrections {} and {}", s.correction1, s.correction2),
          "in (0, 1]", "make the scalars with hd::adamw_scalars for a step >= 1");
  }
  if (!(clip_factor > 0.0f && clip_factor <= 1.0f)) {
    p.add(where(call, "clip_factor"), fmt::format("clip factor {}", clip_factor), "in (0, 1]",
          "hd::adamw_clip_factor of the global gradient norm");
  }
  p.throw_if_any();
}

}  // namespace burst::rt::gpu
