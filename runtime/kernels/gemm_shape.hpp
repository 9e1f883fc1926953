// A matrix product as data, so the CPU (OpenBLAS, row-major) and the GPU (cuBLASLt,
// column-major) run the same list of products and the CPU tests check the shapes the GPU uses.
//
//   C [m x n] = alpha op(A) op(B) + beta C      op(A) is m x k, op(B) is k x n
//
// Matrices are row-major with a leading dimension: element (i, j) of A sits at a[i lda + j].
// beta = 1 accumulates into C (the weight gradients of a step's micro-batches sum that way).
//
// The dense layers of the training step are linear maps y = x W with x [rows, in] and
// W [in, out] (the LM head is one too, with rows a chunk's tokens). Their three products:
//   forward       y  = x W            m = rows, n = out, k = in
//   input grad    dx = dy W^T (+dx)   m = rows, n = in,  k = out
//   weight grad   dW += x^T dy        m = in,   n = out, k = rows
//
// Column-major libraries. A row-major matrix X [r x c] with leading dimension ld is, read
// column-major, X^T [c x r] with the same ld. So the row-major product C = op(A) op(B) is the
// column-major product C^T = op(B)^T op(A)^T: swap the operands, keep each one's op, swap m and
// n, keep k and every leading dimension. to_column_major() does exactly that; the CPU test runs
// its result through a column-major reference and compares with the row-major product.
#pragma once

#include <cstdint>
#include <string_view>

namespace burst::rt {

enum class Op : std::uint8_t { None, Transpose };

struct GemmShape {
  Op op_a = Op::None, op_b = Op::None;
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;  // row-major leading dimensions, in elements
  float alpha = 1.0f, beta = 0.0f;

  // Stored shapes (rows x cols, row-major) of A and B: op(A) is m x k, so A is k x m when transposed.
  [[nodiscard]] std::int64_t a_rows() const { return op_a == Op::None ? m : k; }
  [[nodiscard]] std::int64_t a_cols() const { return op_a == Op::None ? k : m; }
  [[nodiscard]] std::int64_t b_rows() const { return op_b == Op::None ? k : n; }
  [[nodiscard]] std::int64_t b_cols() const { return op_b == Op::None ? n : k; }
  [[nodiscard]] double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }
};

// The products of y = x W, x [rows, in], W [in, out], all dense (leading dimension = columns).
[[nodiscard]] GemmShape linear_forward_gemm(std::int64_t rows, std::int64_t in, std::int64_t out);
// dx = dy W^T, overwriting dx or adding to it.
[[nodiscard]] GemmShape linear_input_grad_gemm(std::int64_t rows, std::int64_t in, std::int64_t out, bool accumulate);
// dW += x^T dy.
[[nodiscard]] GemmShape linear_weight_grad_gemm(std::int64_t rows, std::int64_t in, std::int64_t out);

// Throws burst::Error naming `call` and the field when a dimension is negative or a leading
// dimension is shorter than its matrix's row.
void check_gemm_shape(const GemmShape& g, std::string_view call);

// One operand of a column-major product: the stored matrix is rows x cols, ld apart.
struct ColumnMajorOperand {
  Op op = Op::None;
  std::int64_t rows = 0, cols = 0, ld = 0;
};

// D [m x n] = alpha op(first) op(second) + beta C, every matrix column-major: what cuBLAS(Lt)
// is given for a GemmShape whose first operand is B and second is A (see the head comment).
struct ColumnMajorGemm {
  ColumnMajorOperand first, second;  // first = the row-major B, second = the row-major A
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t ldc = 0;
  float alpha = 1.0f, beta = 0.0f;
};

[[nodiscard]] ColumnMajorGemm to_column_major(const GemmShape& g);

}  // namespace burst::rt
