// Opening cuBLASLt on first use (cublaslt_library.hpp).
#include "runtime/cuda/detail/cublaslt_library.hpp"

#include <dlfcn.h>

#include <string>

#include <fmt/format.h>

#include "common/error.hpp"

namespace burst::rt::gpu {
namespace {

// BURST_CUBLASLT_SONAME and BURST_CUBLASLT_PATH come from runtime/cuda/CMakeLists.txt.
void* open_library() {
  std::string tried;
  for (const char* file : {BURST_CUBLASLT_SONAME, BURST_CUBLASLT_PATH}) {
    if (void* handle = ::dlopen(file, RTLD_NOW | RTLD_LOCAL)) return handle;
    const char* why = ::dlerror();
    tried += fmt::format("{}{}: {}", tried.empty() ? "" : "; ", file, why != nullptr ? why : "not found");
  }
  throw Error(Problem{"cuBLASLt", fmt::format("cannot load the library ({})", tried),
                      "the CUDA toolkit's libcublasLt on the loader's path",
                      "set LD_LIBRARY_PATH to the toolkit's lib"});
}

template <typename Function>
void take(void* handle, const char* name, Function& into) {
  void* symbol = ::dlsym(handle, name);
  if (symbol == nullptr) {
    throw Error(Problem{"cuBLASLt", fmt::format("{} has no {}", BURST_CUBLASLT_SONAME, name),
                        "the cuBLASLt of the toolkit burst was built with", ""});
  }
  into = reinterpret_cast<Function>(symbol);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): dlsym's contract
}

CublasLtLibrary load() {
  void* handle = open_library();
  CublasLtLibrary lib{};
  take(handle, "cublasLtCreate", lib.create);
  take(handle, "cublasLtDestroy", lib.destroy);
  take(handle, "cublasLtGetStatusName", lib.status_name);
  take(handle, "cublasLtGetStatusString", lib.status_string);
  take(handle, "cublasLtMatmul", lib.matmul);
  take(handle, "cublasLtMatmulAlgoGetHeuristic", lib.algo_get_heuristic);
  take(handle, "cublasLtMatmulDescCreate", lib.desc_create);
  take(handle, "cublasLtMatmulDescDestroy", lib.desc_destroy);
  take(handle, "cublasLtMatmulDescSetAttribute", lib.desc_set_attribute);
  take(handle, "cublasLtMatmulPreferenceCreate", lib.preference_create);
  take(handle, "cublasLtMatmulPreferenceDestroy", lib.preference_destroy);
  take(handle, "cublasLtMatmulPreferenceSetAttribute", lib.preference_set_attribute);
  take(handle, "cublasLtMatrixLayoutCreate", lib.layout_create);
  take(handle, "cublasLtMatrixLayoutDestroy", lib.layout_destroy);
  return lib;  // the handle stays open for the process
}

}  // namespace

const CublasLtLibrary& cublaslt() {
  static const CublasLtLibrary library = load();
  return library;
}

}  // namespace burst::rt::gpu
