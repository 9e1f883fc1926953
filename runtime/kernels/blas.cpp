// cblas_sgemm behind gemm() (see blas.hpp). The only file that includes cblas.h.
#include "runtime/kernels/blas.hpp"

#include <cassert>

#include <cblas.h>

#include "common/shared_library.hpp"

namespace burst::rt {
namespace {

struct OpenBlas {
  decltype(&cblas_sgemm) sgemm;
  decltype(&openblas_get_num_threads) get_num_threads;
  decltype(&openblas_set_num_threads) set_num_threads;
};

// BURST_OPENBLAS_PATH (the file whose cblas.h this was compiled against) and BURST_OPENBLAS_SONAME
// (where that file is not, e.g. on a machine the binaries were copied to) come from
// runtime/CMakeLists.txt.
OpenBlas load() {
  const SharedLibrary handle = open_shared_library("OpenBLAS", {BURST_OPENBLAS_PATH, BURST_OPENBLAS_SONAME},
                                                   "OpenBLAS's libopenblas on the loader's path",
                                                   "install libopenblas0 (Debian) or set LD_LIBRARY_PATH");
  OpenBlas lib{};
  take_symbol(handle, "cblas_sgemm", lib.sgemm);
  take_symbol(handle, "openblas_get_num_threads", lib.get_num_threads);
  take_symbol(handle, "openblas_set_num_threads", lib.set_num_threads);
  return lib;
}

// Opened on the first call (thread-safe), kept for the process.
const OpenBlas& openblas() {
  static const OpenBlas library = load();
  return library;
}

CBLAS_TRANSPOSE to_cblas(Op op) { return op == Op::None ? CblasNoTrans : CblasTrans; }
blasint to_blasint(std::int64_t v) { return static_cast<blasint>(v); }

}  // namespace

void gemm(float alpha, ConstMatRef a, Op op_a, ConstMatRef b, Op op_b, float beta, MatRef c) {
  const std::int64_t m = op_a == Op::None ? a.rows : a.cols;
  const std::int64_t k = op_a == Op::None ? a.cols : a.rows;
  const std::int64_t n = op_b == Op::None ? b.cols : b.rows;
  assert(k == (op_b == Op::None ? b.rows : b.cols));
  assert(c.rows == m && c.cols == n);
  openblas().sgemm(CblasRowMajor, to_cblas(op_a), to_cblas(op_b), to_blasint(m), to_blasint(n), to_blasint(k), alpha,
                   a.data, to_blasint(a.ld), b.data, to_blasint(b.ld), beta, c.data, to_blasint(c.ld));
}

void gemm(const GemmShape& shape, const float* a, const float* b, float* c) {
  gemm(shape.alpha, {a, shape.a_rows(), shape.a_cols(), shape.lda}, shape.op_a,
       {b, shape.b_rows(), shape.b_cols(), shape.ldb}, shape.op_b, shape.beta, {c, shape.m, shape.n, shape.ldc});
}

void single_threaded_blas() {
  const OpenBlas& lib = openblas();
  if (lib.get_num_threads() != 1) lib.set_num_threads(1);
}

}  // namespace burst::rt
