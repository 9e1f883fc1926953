// Opening cuBLASLt on first use (cublaslt_library.hpp).
#include "runtime/cuda/detail/cublaslt_library.hpp"

#include "common/shared_library.hpp"

namespace burst::rt::gpu {
namespace {

// BURST_CUBLASLT_SONAME and BURST_CUBLASLT_PATH come from runtime/cuda/CMakeLists.txt.
CublasLtLibrary load() {
  const SharedLibrary handle = open_shared_library("cuBLASLt", {BURST_CUBLASLT_SONAME, BURST_CUBLASLT_PATH},
                                                   "the CUDA toolkit's libcublasLt on the loader's path",
                                                   "set LD_LIBRARY_PATH to the toolkit's lib");
  CublasLtLibrary lib{};
  take_symbol(handle, "cublasLtCreate", lib.create);
  take_symbol(handle, "cublasLtDestroy", lib.destroy);
  take_symbol(handle, "cublasLtGetStatusName", lib.status_name);
  take_symbol(handle, "cublasLtGetStatusString", lib.status_string);
  take_symbol(handle, "cublasLtMatmul", lib.matmul);
  take_symbol(handle, "cublasLtMatmulAlgoGetHeuristic", lib.algo_get_heuristic);
  take_symbol(handle, "cublasLtMatmulDescCreate", lib.desc_create);
  take_symbol(handle, "cublasLtMatmulDescDestroy", lib.desc_destroy);
  take_symbol(handle, "cublasLtMatmulDescSetAttribute", lib.desc_set_attribute);
  take_symbol(handle, "cublasLtMatmulPreferenceCreate", lib.preference_create);
  take_symbol(handle, "cublasLtMatmulPreferenceDestroy", lib.preference_destroy);
  take_symbol(handle, "cublasLtMatmulPreferenceSetAttribute", lib.preference_set_attribute);
  take_symbol(handle, "cublasLtMatrixLayoutCreate", lib.layout_create);
  take_symbol(handle, "cublasLtMatrixLayoutDestroy", lib.layout_destroy);
  return lib;
}

}  // namespace

const CublasLtLibrary& cublaslt() {
  static const CublasLtLibrary library = load();
  return library;
}

}  // namespace burst::rt::gpu
