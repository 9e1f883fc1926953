// The dense layer operations (see layer_ops.hpp for the math). The per-element arithmetic of
// RMSNorm, RoPE and SwiGLU is that of runtime/training/hd/, which the CUDA kernels run too; the
// sums here stay in double and in row order, as they always were.
#include "runtime/training/detail/layer_ops.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/kernels/blas.hpp"
#include "runtime/training/argument_checks.hpp"
#include "runtime/training/hd/rms_norm.hpp"
#include "runtime/training/hd/rope.hpp"
#include "runtime/training/hd/swiglu.hpp"

namespace burst::rt {
namespace {

void check_linear(Problems& p, std::string_view call, std::size_t x, std::int64_t rows, std::int64_t in, std::size_t w,
                  std::int64_t out) {
  check_at_least(p, call, "rows", rows, 0);
  check_at_least(p, call, "in", in, 1);
  check_at_least(p, call, "out", out, 1);
  check_size(p, call, "x", x, rows * in, "rows * in");
  check_size(p, call, "w", w, in * out, "in * out");
}

// Turns every head row of x by a_i (rope_forward), or back by -a_i (rope_backward: inverse).
void rotate(std::string_view call, View x, std::span<const std::int64_t> positions, float base, bool inverse) {
  Problems problems;
  const Shape& s = x.shape;
  check_at_least(problems, call, "x.tokens", s.tokens, 0);
  check_at_least(problems, call, "x.heads", s.heads, 1);
  if (s.head_dim < 2 || s.head_dim % 2 != 0) {
    problems.add(where(call, "x"), fmt::format("head_dim {}", s.head_dim), "an even head_dim >= 2",
                 "rotary embedding turns pairs (i, i + head_dim / 2)");
  }
  if (x.data == nullptr && s.tokens > 0) problems.add(where(call, "x"), "no data");
  check_size(problems, call, "positions", positions.size(), s.tokens, "one per token");
  if (!(base > 1.0f)) problems.add(where(call, "base"), fmt::format("base {}", base), "base > 1", "Llama uses 10000");
  problems.throw_if_any();

  const std::int64_t half = s.head_dim / 2;
  std::vector<double> frequency(static_cast<std::size_t>(half));
  for (std::int64_t i = 0; i < half; ++i) frequency[i] = hd::rope_frequency(i, s.head_dim, base);
  std::vector<hd::RopeTurn> turn(frequency.size());
  for (std::int64_t t = 0; t < s.tokens; ++t) {
    for (std::int64_t i = 0; i < half; ++i) turn[i] = hd::rope_turn(positions[t], frequency[i], inverse);
    for (std::int64_t h = 0; h < s.heads; ++h) {
      float* row = x.row(t, h);
      for (std::int64_t i = 0; i < half; ++i) {
        const hd::RopePair turned = hd::rope_rotate({row[i], row[i + half]}, turn[i]);
        row[i] = turned.first;
        row[i + half] = turned.second;
      }
    }
  }
}

void check_embedding(Problems& p, std::string_view call, std::span<const std::int32_t> tokens, std::size_t table,
                     std::string_view table_name, std::int64_t vocab, std::int64_t dim) {
  check_at_least(p, call, "vocab", vocab, 1);
  check_at_least(p, call, "dim", dim, 1);
  check_size(p, call, table_name, table, vocab * dim, "vocab * dim");
  check_ids(p, call, "token", tokens, 0, vocab, fmt::format("0 <= token < {}", vocab),
            "the tokenizer and the model must agree on the vocabulary");
}

}  // namespace

void linear_forward(std::span<const float> x, std::int64_t rows, std::int64_t in, std::span<const float> w,
                    std::int64_t out, std::span<float> y) {
  Problems problems;
  check_linear(problems, "linear_forward", x.size(), rows, in, w.size(), out);
  check_size(problems, "linear_forward", "y", y.size(), rows * out, "rows * out");
  problems.throw_if_any();
  if (rows == 0) return;
  gemm(linear_forward_gemm(rows, in, out), x.data(), w.data(), y.data());
}

void linear_backward(std::span<const float> x, std::int64_t rows, std::int64_t in, std::span<const float> w,
                     std::int64_t out, std::span<const float> dy, std::span<float> dx, std::span<float> dw,
                     bool accumulate_dx) {
  Problems problems;
  check_linear(problems, "linear_backward", x.size(), rows, in, w.size(), out);
  check_size(problems, "linear_backward", "dy", dy.size(), rows * out, "rows * out");
  check_size(problems, "linear_backward", "dx", dx.size(), rows * in, "rows * in");
  check_size(problems, "linear_backward", "dw", dw.size(), in * out, "in * out");
  problems.throw_if_any();
  if (rows == 0) return;
  gemm(linear_input_grad_gemm(rows, in, out, accumulate_dx), dy.data(), w.data(), dx.data());
  gemm(linear_weight_grad_gemm(rows, in, out), x.data(), dy.data(), dw.data());
}

void rms_norm_forward(std::span<const float> x, std::span<const float> gain, std::int64_t rows, std::int64_t dim,
                      float eps, std::span<float> y, std::span<float> inv_rms) {
  constexpr std::string_view call = "rms_norm_forward";
  Problems problems;
  check_at_least(problems, call, "rows", rows, 0);
  check_at_least(problems, call, "dim", dim, 1);
  check_size(problems, call, "x", x.size(), rows * dim, "rows * dim");
  check_size(problems, call, "gain", gain.size(), dim, "dim");
  check_size(problems, call, "y", y.size(), rows * dim, "rows * dim");
  check_size(problems, call, "inv_rms", inv_rms.size(), rows, "rows");
  if (!(eps > 0.0f)) problems.add(where(call, "eps"), fmt::format("eps {}", eps), "eps > 0", "Llama uses 1e-5");
  problems.throw_if_any();

  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * dim;
    float* yr = y.data() + r * dim;
    double squares = 0;
    for (std::int64_t j = 0; j < dim; ++j) squares += hd::square_of<double>(xr[j]);
    const float inv = hd::rms_norm_inverse(squares, dim, eps);
    inv_rms[r] = inv;
    for (std::int64_t j = 0; j < dim; ++j) yr[j] = hd::rms_norm_output(xr[j], inv, gain[j]);
  }
}

void rms_norm_backward(std::span<const float> x, std::span<const float> gain, std::span<const float> inv_rms,
                       std::span<const float> dy, std::int64_t rows, std::int64_t dim, std::span<float> dx,
                       std::span<float> dgain) {
  constexpr std::string_view call = "rms_norm_backward";
  Problems problems;
  check_at_least(problems, call, "rows", rows, 0);
  check_at_least(problems, call, "dim", dim, 1);
  check_size(problems, call, "x", x.size(), rows * dim, "rows * dim");
  check_size(problems, call, "gain", gain.size(), dim, "dim");
  check_size(problems, call, "inv_rms", inv_rms.size(), rows, "rows");
  check_size(problems, call, "dy", dy.size(), rows * dim, "rows * dim");
  check_size(problems, call, "dx", dx.size(), rows * dim, "rows * dim");
  check_size(problems, call, "dgain", dgain.size(), dim, "dim");
  problems.throw_if_any();

  std::vector<double> dg(static_cast<std::size_t>(dim), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * dim;
    const float* dyr = dy.data() + r * dim;
    float* dxr = dx.data() + r * dim;
    const double inv = inv_rms[r];
    double dot = 0;
    for (std::int64_t j = 0; j < dim; ++j) {
      dot += hd::rms_norm_dot_term<double>(gain[j], dyr[j], xr[j]);
      dg[j] += hd::rms_norm_dgain_term(dyr[j], xr[j], inv);
    }
    const double through_rms = hd::rms_norm_through_rms(inv, dot, dim);
    for (std::int64_t j = 0; j < dim; ++j) dxr[j] = hd::rms_norm_dx(inv, through_rms, gain[j], dyr[j], xr[j]);
  }
  for (std::int64_t j = 0; j < dim; ++j) dgain[j] += static_cast<float>(dg[j]);
}

void rope_forward(View x, std::span<const std::int64_t> positions, float base) {
  rotate("rope_forward", x, positions, base, false);
}

void rope_backward(View dx, std::span<const std::int64_t> positions, float base) {
  rotate("rope_backward", dx, positions, base, true);
}

void swiglu_forward(std::span<const float> u, std::span<const float> w, std::span<float> m) {
  Problems problems;
  check_size(problems, "swiglu_forward", "w", w.size(), static_cast<std::int64_t>(u.size()), "the size of u");
  check_size(problems, "swiglu_forward", "m", m.size(), static_cast<std::int64_t>(u.size()), "the size of u");
  problems.throw_if_any();
  for (std::size_t i = 0; i < u.size(); ++i) m[i] = hd::swiglu_value(u[i], w[i]);
}

void swiglu_backward(std::span<const float> u, std::span<const float> w, std::span<const float> dm, std::span<float> du,
                     std::span<float> dw) {
  constexpr std::string_view call = "swiglu_backward";
  Problems problems;
  const auto n = static_cast<std::int64_t>(u.size());
  check_size(problems, call, "w", w.size(), n, "the size of u");
  check_size(problems, call, "dm", dm.size(), n, "the size of u");
  check_size(problems, call, "du", du.size(), n, "the size of u");
  check_size(problems, call, "dw", dw.size(), n, "the size of u");
  problems.throw_if_any();
  for (std::size_t i = 0; i < u.size(); ++i) {
    const hd::SwigluGrad g = hd::swiglu_grad(u[i], w[i], dm[i]);
    du[i] = g.du;
    dw[i] = g.dw;
  }
}

void embedding_forward(std::span<const std::int32_t> tokens, std::span<const float> table, std::int64_t vocab,
                       std::int64_t dim, std::span<float> out) {
  Problems problems;
  check_embedding(problems, "embedding_forward", tokens, table.size(), "table", vocab, dim);
  check_size(problems, "embedding_forward", "out", out.size(), static_cast<std::int64_t>(tokens.size()) * dim,
             "tokens * dim");
  problems.throw_if_any();
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    const float* row = table.data() + tokens[t] * dim;
    std::copy(row, row + dim, out.data() + static_cast<std::int64_t>(t) * dim);
  }
}

void embedding_backward(std::span<const std::int32_t> tokens, std::span<const float> dout, std::int64_t vocab,
                        std::int64_t dim, std::span<float> dtable) {
  Problems problems;
  check_embedding(problems, "embedding_backward", tokens, dtable.size(), "dtable", vocab, dim);
  check_size(problems, "embedding_backward", "dout", dout.size(), static_cast<std::int64_t>(tokens.size()) * dim,
             "tokens * dim");
  problems.throw_if_any();
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    const float* grad = dout.data() + static_cast<std::int64_t>(t) * dim;
    float* row = dtable.data() + tokens[t] * dim;
    for (std::int64_t j = 0; j < dim; ++j) row[j] += grad[j];
  }
}

}  // namespace burst::rt
