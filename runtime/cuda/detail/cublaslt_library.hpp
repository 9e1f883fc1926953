// cuBLASLt, loaded on first use instead of when the program starts.
//
// Linking libcublasLt makes the dynamic loader run its initialisers in every process that
// contains the CUDA backend: 0.42 s of start-up on the development machine (a bare `int main`
// linked against it takes that long, against 0.00 s for one linked against cudart and NCCL), paid
// by `burst --version`, every `burst plan`, every MPI rank of every CPU run and every test that
// spawns the CLI, none of which multiplies a matrix on a GPU. So the library is opened the first
// time a CublasLtGemm is made (common/shared_library.hpp), and its entry points are taken from it
// with their types from <cublasLt.h> (decltype), so a signature cannot drift from the header's.
//
// The file is the toolkit's soname (libcublasLt.so.<major>), then the path CMake found at
// configure time.
#pragma once

#include <cublasLt.h>

namespace burst::rt::gpu {

struct CublasLtLibrary {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtDestroy) destroy;
  decltype(&cublasLtGetStatusName) status_name;
  decltype(&cublasLtGetStatusString) status_string;
  decltype(&cublasLtMatmul) matmul;
  decltype(&cublasLtMatmulAlgoGetHeuristic) algo_get_heuristic;
  decltype(&cublasLtMatmulDescCreate) desc_create;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set_attribute;
  decltype(&cublasLtMatmulPreferenceCreate) preference_create;
  decltype(&cublasLtMatmulPreferenceDestroy) preference_destroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set_attribute;
  decltype(&cublasLtMatrixLayoutCreate) layout_create;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy;
};

// The library, opened on the first call (thread-safe) and kept for the process. Throws
// burst::Error naming the files tried and the loader's message where it cannot be opened or
// lacks an entry point.
[[nodiscard]] const CublasLtLibrary& cublaslt();

}  // namespace burst::rt::gpu
