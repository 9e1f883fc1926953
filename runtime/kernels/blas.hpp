// The one door to BLAS: C = alpha * op(A) * op(B) + beta * C on strided row-major matrices,
// through OpenBLAS's cblas_sgemm.
//
// Thread model: the kernels parallelise over (head, tile) work items themselves, one item per
// thread at a time, so every sgemm must run single-threaded inside the calling thread. A
// threaded OpenBLAS would spawn its own workers under each of ours and oversubscribe the
// cores; single_threaded_blas() pins OpenBLAS to one thread (openblas_set_num_threads(1)) and
// every kernel launcher calls it before starting its threads. That setting is process-wide:
// the runtime owns the cores it runs on.
//
// Loading: OpenBLAS is opened by the first call into it, gemm or single_threaded_blas()
// (common/shared_library.hpp), not linked. Linked, it loaded in every burst process and started a worker thread that
// spun on sched_yield for its first tenth of a second: `burst plan` took 0.12-0.14 s of wall time and twice that of
// CPU, against 0.09 s now. A CPU training run opens it before its memory check, so the library's mappings count against
// an address-space limit there.
#pragma once

#include "runtime/kernels/gemm_shape.hpp"
#include "runtime/kernels/tensor.hpp"

namespace burst::rt {

// op(A) is m x k, op(B) is k x n, C is m x n (checked in debug builds).
void gemm(float alpha, ConstMatRef a, Op op_a, ConstMatRef b, Op op_b, float beta, MatRef c);
// The same product described as data (gemm_shape.hpp), as the GPU runs it.
void gemm(const GemmShape& shape, const float* a, const float* b, float* c);

// 2 m n k: the FLOPs of one gemm.
[[nodiscard]] inline double gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

void single_threaded_blas();

}  // namespace burst::rt
