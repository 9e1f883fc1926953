// cblas_sgemm behind gemm() (see blas.hpp). The only file that includes cblas.h.
#include "runtime/kernels/blas.hpp"

#include <cassert>

#include <cblas.h>

namespace burst::rt {
namespace {

CBLAS_TRANSPOSE to_cblas(Op op) { return op == Op::None ? CblasNoTrans : CblasTrans; }
blasint to_blasint(std::int64_t v) { return static_cast<blasint>(v); }

}  // namespace

void gemm(float alpha, ConstMatRef a, Op op_a, ConstMatRef b, Op op_b, float beta, MatRef c) {
  const std::int64_t m = op_a == Op::None ? a.rows : a.cols;
  const std::int64_t k = op_a == Op::None ? a.cols : a.rows;
  const std::int64_t n = op_b == Op::None ? b.cols : b.rows;
  assert(k == (op_b == Op::None ? b.rows : b.cols));
  assert(c.rows == m && c.cols == n);
  cblas_sgemm(CblasRowMajor, to_cblas(op_a), to_cblas(op_b), to_blasint(m), to_blasint(n), to_blasint(k), alpha, a.data,
              to_blasint(a.ld), b.data, to_blasint(b.ld), beta, c.data, to_blasint(c.ld));
}

void gemm(const GemmShape& shape, const float* a, const float* b, float* c) {
  gemm(shape.alpha, {a, shape.a_rows(), shape.a_cols(), shape.lda}, shape.op_a,
       {b, shape.b_rows(), shape.b_cols(), shape.ldb}, shape.op_b, shape.beta, {c, shape.m, shape.n, shape.ldc});
}

void single_threaded_blas() {
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}

}  // namespace burst::rt
