// GemmShape (runtime/kernels/gemm_shape.hpp): the linear layer's three products computed from
// their shapes equal the products written out by hand, and the column-major form that cuBLASLt
// is given, run through a column-major reference with cuBLAS's semantics, gives the row-major
// product, for every op combination, padded leading dimensions and beta 0 and 1.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "common/error.hpp"
#include "runtime/kernels/blas.hpp"
#include "runtime/kernels/gemm_shape.hpp"

using namespace burst;
using rt::Op;

namespace {

std::vector<float> random_values(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// cuBLAS's D = alpha op(A) op(B) + beta C with column-major operands: element (i, j) of a stored
// matrix is at p[i + j ld]; op T reads the stored matrix transposed.
void column_major_reference(const rt::ColumnMajorGemm& g, const float* first, const float* second, float* c) {
  const auto at = [](const rt::ColumnMajorOperand& x, const float* p, std::int64_t i, std::int64_t j) {
    return x.op == Op::None ? p[i + j * x.ld] : p[j + i * x.ld];
  };
  for (std::int64_t j = 0; j < g.n; ++j) {
    for (std::int64_t i = 0; i < g.m; ++i) {
      double sum = 0;
      for (std::int64_t l = 0; l < g.k; ++l) sum += double(at(g.first, first, i, l)) * at(g.second, second, l, j);
      float& out = c[i + j * g.ldc];
      out = static_cast<float>(g.alpha * sum + (g.beta == 0.0f ? 0.0 : double(g.beta) * out));
    }
  }
}

// Row i of a against row j of b, both dense row-major with n columns: every linear product
// below is such a dot once its operands are laid out as rows.
double dot_rows(const std::vector<float>& a, std::int64_t i, const std::vector<float>& b, std::int64_t j,
                std::int64_t n) {
  double s = 0;
  for (std::int64_t l = 0; l < n; ++l)
    s += double(a[static_cast<std::size_t>(i * n + l)]) * b[static_cast<std::size_t>(j * n + l)];
  return s;
}

}  // namespace

TEST_CASE("the linear layer's products, from their shapes, are y = x W, dx = dy W^T and dW += x^T dy") {
  std::mt19937 rng(7);
  const std::int64_t rows = 5, in = 3, out = 4;
  const auto x = random_values(rows * in, rng), w = random_values(in * out, rng), dy = random_values(rows * out, rng);
  // W^T and dy^T / x^T rows, so every product is a dot of rows.
  std::vector<float> wt(in * out), xt(rows * in), dyt(rows * out);
  for (std::int64_t i = 0; i < in; ++i)
    for (std::int64_t o = 0; o < out; ++o) wt[o * in + i] = w[i * out + o];
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t i = 0; i < in; ++i) xt[i * rows + r] = x[r * in + i];
    for (std::int64_t o = 0; o < out; ++o) dyt[o * rows + r] = dy[r * out + o];
  }

  std::vector<float> y(rows * out);
  rt::gemm(rt::linear_forward_gemm(rows, in, out), x.data(), w.data(), y.data());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t o = 0; o < out; ++o) CHECK(y[r * out + o] == Approx(dot_rows(x, r, wt, o, in)).margin(1e-6));

  std::vector<float> dx(rows * in, 1.0f);
  rt::gemm(rt::linear_input_grad_gemm(rows, in, out, true), dy.data(), w.data(), dx.data());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t i = 0; i < in; ++i)
      CHECK(dx[r * in + i] == Approx(1.0 + dot_rows(dy, r, w, i, out)).margin(1e-6));

  std::vector<float> dw(in * out, 2.0f);
  rt::gemm(rt::linear_weight_grad_gemm(rows, in, out), x.data(), dy.data(), dw.data());
  for (std::int64_t i = 0; i < in; ++i)
    for (std::int64_t o = 0; o < out; ++o)
      CHECK(dw[i * out + o] == Approx(2.0 + dot_rows(xt, i, dyt, o, rows)).margin(1e-6));
}

TEST_CASE("the column-major form of a product computes the same C as the row-major product") {
  std::mt19937 rng(11);
  const std::int64_t m = 7, n = 5, k = 6;
  for (const Op op_a : {Op::None, Op::Transpose}) {
    for (const Op op_b : {Op::None, Op::Transpose}) {
      for (const float beta : {0.0f, 1.0f}) {
        for (const std::int64_t pad : {0, 3}) {
          rt::GemmShape g{op_a, op_b, m, n, k, 0, 0, 0, 0.5f, beta};
          g.lda = g.a_cols() + pad;
          g.ldb = g.b_cols() + pad;
          g.ldc = n + pad;
          const auto a = random_values(static_cast<std::size_t>(g.a_rows() * g.lda), rng);
          const auto b = random_values(static_cast<std::size_t>(g.b_rows() * g.ldb), rng);
          const auto c0 = random_values(static_cast<std::size_t>(m * g.ldc), rng);
          std::vector<float> row_major = c0, column_major = c0;
          rt::gemm(g, a.data(), b.data(), row_major.data());
          const rt::ColumnMajorGemm cm = rt::to_column_major(g);
          // Operand shapes as cuBLASLt's matrix layouts take them: ld covers each stored column.
          CHECK(cm.first.ld >= cm.first.rows);
          CHECK(cm.second.ld >= cm.second.rows);
          CHECK(cm.ldc >= cm.m);
          CHECK((cm.first.op == Op::None ? cm.first.rows : cm.first.cols) == cm.m);
          CHECK((cm.second.op == Op::None ? cm.second.cols : cm.second.rows) == cm.n);
          column_major_reference(cm, b.data(), a.data(), column_major.data());
          INFO("op_a " << int(op_a) << " op_b " << int(op_b) << " beta " << beta << " pad " << pad);
          for (std::size_t i = 0; i < c0.size(); ++i) REQUIRE(column_major[i] == Approx(row_major[i]).margin(1e-5));
        }
      }
    }
  }
}

TEST_CASE("a bad product shape is refused naming the field") {
  rt::GemmShape g = rt::linear_forward_gemm(4, 3, 2);
  CHECK_NOTHROW(rt::check_gemm_shape(g, "test"));
  g.lda = 2;
  CHECK_THROWS_WITH(rt::check_gemm_shape(g, "test"),
                    Catch::Contains("test: lda") && Catch::Contains(">= A's 3 columns"));
  g = rt::linear_weight_grad_gemm(4, 3, 2);
  g.k = -1;
  CHECK_THROWS_WITH(rt::check_gemm_shape(g, "test"), Catch::Contains("test: k"));
}
