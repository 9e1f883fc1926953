// GemmShape builders and the row-major -> column-major mapping (see gemm_shape.hpp).
#include "runtime/kernels/gemm_shape.hpp"

#include <fmt/format.h>

#include "common/error.hpp"

namespace burst::rt {

GemmShape linear_forward_gemm(std::int64_t rows, std::int64_t in, std::int64_t out) {
  return {Op::None, Op::None, rows, out, in, in, out, out, 1.0f, 0.0f};
}

GemmShape linear_input_grad_gemm(std::int64_t rows, std::int64_t in, std::int64_t out, bool accumulate) {
  return {Op::None, Op::Transpose, rows, in, out, out, out, in, 1.0f, accumulate ? 1.0f : 0.0f};
}

GemmShape linear_weight_grad_gemm(std::int64_t rows, std::int64_t in, std::int64_t out) {
  return {Op::Transpose, Op::None, in, out, rows, in, out, out, 1.0f, 1.0f};
}

void check_gemm_shape(const GemmShape& g, std::string_view call) {
  const auto fail = [&](std::string_view field, std::int64_t value, std::string_view need) {
    throw Error(
        Problem{fmt::format("{}: {}", call, field), fmt::format("{} = {}", field, value), std::string(need), ""});
  };
  if (g.m < 0) fail("m", g.m, ">= 0");
  if (g.n < 0) fail("n", g.n, ">= 0");
  if (g.k < 0) fail("k", g.k, ">= 0");
  if (g.lda < std::max<std::int64_t>(1, g.a_cols())) fail("lda", g.lda, fmt::format(">= A's {} columns", g.a_cols()));
  if (g.ldb < std::max<std::int64_t>(1, g.b_cols())) fail("ldb", g.ldb, fmt::format(">= B's {} columns", g.b_cols()));
  if (g.ldc < std::max<std::int64_t>(1, g.n)) fail("ldc", g.ldc, fmt::format(">= C's {} columns", g.n));
}

ColumnMajorGemm to_column_major(const GemmShape& g) {
  // Row-major X [r x c] read column-major is X^T [c x r]: rows and columns trade places.
  const ColumnMajorOperand first{g.op_b, g.b_cols(), g.b_rows(), g.ldb};
  const ColumnMajorOperand second{g.op_a, g.a_cols(), g.a_rows(), g.lda};
  return {first, second, g.n, g.m, g.k, g.ldc, g.alpha, g.beta};
}

}  // namespace burst::rt
