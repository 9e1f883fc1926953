// The dense pieces of a Llama-style decoder layer, forward and backward, on one rank.
//
// Activations are row-major matrices [rows = tokens, cols = features] passed as spans with
// explicit dims; every matrix product goes through gemm (blas.hpp).
//
// Linear, y = x W with W [in, out]:
//   dx = dy W^T,  dW += x^T dy
// RMSNorm per row of n features, r = 1 / sqrt(mean(x^2) + eps), y_j = x_j r g_j:
//   dg_j += dy_j x_j r,  dx_k = r (g_k dy_k - x_k r^2 / n * sum_j g_j dy_j x_j)
// (the second term is the gradient through r, dr/dx_k = -r^3 x_k / n).
// Rotary embedding (Llama / Hugging Face layout) of a head row of d features at global
// position p: pair (i, i + d/2), i < d/2, turns by the angle a_i = p * base^(-2i/d):
//   x_i' = x_i cos a_i - x_{i+d/2} sin a_i,   x_{i+d/2}' = x_{i+d/2} cos a_i + x_i sin a_i
// A rotation is orthogonal, so its backward is its transpose: the turn by -a_i. Because the
// turns compose, <rope(q, p1), rope(k, p2)> depends on p1 - p2 only: attention sees relative
// positions, and any token order (the sequence layouts permute tokens) is fine.
// SwiGLU, m = silu(u) * w with silu(u) = u s(u), s the logistic sigmoid:
//   dw = dm silu(u),  du = dm w s(u) (1 + u (1 - s(u)))
// Embedding, out_t = table[token_t]: dtable[token_t] += dout_t (repeated tokens add up).
//
// Outputs are overwritten and parameter gradients (dW, dgain, dtable) accumulate (+=), so the
// micro-batches of one step sum into the same buffers. Bad sizes throw burst::Error naming the
// call and the argument.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/kernels/tensor.hpp"

namespace burst::rt {

// y [rows, out] = x [rows, in] W [in, out].
void linear_forward(std::span<const float> x, std::int64_t rows, std::int64_t in, std::span<const float> w,
                    std::int64_t out, std::span<float> y);
// dx = dy W^T (overwritten, or added when accumulate_dx); dW += x^T dy.
void linear_backward(std::span<const float> x, std::int64_t rows, std::int64_t in, std::span<const float> w,
                     std::int64_t out, std::span<const float> dy, std::span<float> dx, std::span<float> dw,
                     bool accumulate_dx);

// y [rows, dim] and inv_rms [rows] (kept for the backward).
void rms_norm_forward(std::span<const float> x, std::span<const float> gain, std::int64_t rows, std::int64_t dim,
                      float eps, std::span<float> y, std::span<float> inv_rms);
// dx overwritten, dgain accumulated.
void rms_norm_backward(std::span<const float> x, std::span<const float> gain, std::span<const float> inv_rms,
                       std::span<const float> dy, std::int64_t rows, std::int64_t dim, std::span<float> dx,
                       std::span<float> dgain);

// In place on [tokens, heads, head_dim] (head_dim even); positions: one per token.
void rope_forward(View x, std::span<const std::int64_t> positions, float base);
void rope_backward(View dx, std::span<const std::int64_t> positions, float base);

// Elementwise over equal-length spans; du, dw overwritten.
void swiglu_forward(std::span<const float> u, std::span<const float> w, std::span<float> m);
void swiglu_backward(std::span<const float> u, std::span<const float> w, std::span<const float> dm, std::span<float> du,
                     std::span<float> dw);

// out [tokens, dim] from table [vocab, dim]; every token in [0, vocab).
void embedding_forward(std::span<const std::int32_t> tokens, std::span<const float> table, std::int64_t vocab,
                       std::int64_t dim, std::span<float> out);
// dtable [vocab, dim] accumulated.
void embedding_backward(std::span<const std::int32_t> tokens, std::span<const float> dout, std::int64_t vocab,
                        std::int64_t dim, std::span<float> dtable);

}  // namespace burst::rt
