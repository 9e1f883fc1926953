// cuBLASLt products of GemmShapes (see cublaslt_gemm.hpp).
#include "runtime/cuda/detail/cublaslt_gemm.hpp"

#include <bit>
#include <utility>

#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/detail/cublaslt_library.hpp"

namespace burst::rt::gpu {
namespace {

void check_lt(cublasStatus_t status, std::string_view call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw Error(Problem{
      "cuBLASLt", fmt::format("{}: {} ({})", call, cublaslt().status_string(status), cublaslt().status_name(status)),
      "", ""});
}

cublasOperation_t to_lt(Op op) { return op == Op::None ? CUBLAS_OP_N : CUBLAS_OP_T; }
cudaDataType_t to_lt(GemmOutput type) { return type == GemmOutput::F32 ? CUDA_R_32F : CUDA_R_16BF; }

template <typename T>
void set(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, const T& value, std::string_view what) {
  check_lt(cublaslt().desc_set_attribute(desc, attribute, &value, sizeof(value)), what);
}

template <typename T>
void set(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attribute, const T& value,
         std::string_view what) {
  check_lt(cublaslt().preference_set_attribute(pref, attribute, &value, sizeof(value)), what);
}

cublasLtMatrixLayout_t make_layout(cudaDataType_t type, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  cublasLtMatrixLayout_t layout = nullptr;
  check_lt(
      cublaslt().layout_create(&layout, type, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols), ld),
      "cublasLtMatrixLayoutCreate");
  return layout;
}

}  // namespace

std::size_t recommended_gemm_workspace(int compute_capability_major) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  return compute_capability_major >= 9 ? 32 * kMiB : 4 * kMiB;
}

std::uint32_t pointer_alignment(const void* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  if (address == 0) return 256;
  return static_cast<std::uint32_t>(std::min<std::uintptr_t>(256, address & (~address + 1)));
}

void check_gemm_arguments(const GemmShape& shape, const void* a, const void* b, const void* c, GemmOutput c_type,
                          std::string_view call) {
  check_gemm_shape(shape, call);
  const bool empty_output = shape.m == 0 || shape.n == 0;
  const bool reads_operands = !empty_output && shape.k > 0;
  const auto require = [&](std::string_view name, const void* p, bool needed, std::uint32_t element) {
    if (needed && p == nullptr) {
      throw Error(Problem{fmt::format("{}: {}", call, name), "null device pointer", "a device allocation", ""});
    }
    if (p != nullptr && pointer_alignment(p) < element) {
      throw Error(Problem{fmt::format("{}: {}", call, name),
                          fmt::format("address {} is not {}-byte aligned", p, element),
                          fmt::format("aligned to its element size ({} bytes)", element), ""});
    }
  };
  require("a", a, reads_operands, 2);
  require("b", b, reads_operands, 2);
  require("c", c, !empty_output, c_type == GemmOutput::F32 ? 4 : 2);
}

struct CublasLtGemm::Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, c = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  cublasLtMatmulHeuristicResult_t algorithm{};

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (preference != nullptr) (void)cublaslt().preference_destroy(preference);
    for (cublasLtMatrixLayout_t layout : {first, second, c}) {
      if (layout != nullptr) (void)cublaslt().layout_destroy(layout);
    }
    if (desc != nullptr) (void)cublaslt().desc_destroy(desc);
  }
};

CublasLtGemm::CublasLtGemm(cudaStream_t stream, std::size_t workspace_bytes)
    : stream_(stream), workspace_bytes_(workspace_bytes) {
  check_lt(cublaslt().create(&handle_), "cublasLtCreate");
  if (workspace_bytes_ > 0) {
    const cudaError_t status = cudaMalloc(&workspace_, workspace_bytes_);
    if (status != cudaSuccess) {
      (void)cublaslt().destroy(handle_);
      check_cuda(status, fmt::format("cudaMalloc(cuBLASLt workspace, {} bytes)", workspace_bytes_));
    }
  }
}

CublasLtGemm::~CublasLtGemm() {
  plans_.clear();
  if (workspace_ != nullptr) (void)cudaFree(workspace_);
  if (handle_ != nullptr) (void)cublaslt().destroy(handle_);
}

CublasLtGemm::Plan& CublasLtGemm::plan_for(const GemmShape& shape, const Key& key) {
  if (auto it = plans_.find(key); it != plans_.end()) return *it->second;
  const ColumnMajorGemm g = to_column_major(shape);
  auto plan = std::make_unique<Plan>();
  check_lt(cublaslt().desc_create(&plan->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  set(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, to_lt(g.first.op), "cublasLtMatmulDescSetAttribute(TRANSA)");
  set(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, to_lt(g.second.op), "cublasLtMatmulDescSetAttribute(TRANSB)");
  plan->first = make_layout(CUDA_R_16BF, g.first.rows, g.first.cols, g.first.ld);
  plan->second = make_layout(CUDA_R_16BF, g.second.rows, g.second.cols, g.second.ld);
  plan->c = make_layout(to_lt(key.output), g.m, g.n, g.ldc);
  check_lt(cublaslt().preference_create(&plan->preference), "cublasLtMatmulPreferenceCreate");
  const std::uint64_t workspace = workspace_bytes_;
  set(plan->preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace, "preference(MAX_WORKSPACE_BYTES)");
  // cuBLASLt's A is the row-major B, its B the row-major A.
  set(plan->preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.align_b, "preference(MIN_ALIGNMENT_A)");
  set(plan->preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.align_a, "preference(MIN_ALIGNMENT_B)");
  set(plan->preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.align_c, "preference(MIN_ALIGNMENT_C)");
  set(plan->preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.align_c, "preference(MIN_ALIGNMENT_D)");
  // Split-K partial sums reduced in fp32 only: a reduction in the output type (or in place in
  // the output) would round every partial sum of a bf16 product to bf16 (head comment).
  const std::uint32_t reductions = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  set(plan->preference, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, reductions, "preference(REDUCTION_SCHEME_MASK)");
  int found = 0;
  check_lt(cublaslt().algo_get_heuristic(handle_, plan->desc, plan->first, plan->second, plan->c, plan->c,
                                         plan->preference, 1, &plan->algorithm, &found),
           "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0) {
    throw Error(Problem{
        "cuBLASLt",
        fmt::format("no algorithm for the product m={} n={} k={} (lda={} ldb={} ldc={}) within a {}-byte workspace",
                    shape.m, shape.n, shape.k, shape.lda, shape.ldb, shape.ldc, workspace_bytes_),
        "", ""});
  }
  return *plans_.emplace(key, std::move(plan)).first->second;
}

void CublasLtGemm::run(const GemmShape& shape, const void* a, const void* b, void* c, GemmOutput c_type) {
  check_gemm_arguments(shape, a, b, c, c_type, "CublasLtGemm::run");
  // Nothing to write, or C += nothing (a rank with no rows for a weight gradient).
  if (shape.m == 0 || shape.n == 0 || (shape.k == 0 && shape.beta == 1.0f)) return;
  const Key key{shape.op_a,
                shape.op_b,
                shape.m,
                shape.n,
                shape.k,
                shape.lda,
                shape.ldb,
                shape.ldc,
                c_type,
                pointer_alignment(a),
                pointer_alignment(b),
                pointer_alignment(c)};
  const Plan& plan = plan_for(shape, key);
  // The column-major product's first operand is the row-major B, its second the row-major A.
  check_lt(cublaslt().matmul(handle_, plan.desc, &shape.alpha, b, plan.first, a, plan.second, &shape.beta, c, plan.c, c,
                             plan.c, &plan.algorithm.algo, workspace_, workspace_bytes_, stream_),
           "cublasLtMatmul");
}

}  // namespace burst::rt::gpu
