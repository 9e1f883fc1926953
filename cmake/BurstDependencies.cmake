# Third-party dependencies, all from Debian packages (see tools/install-deps.sh).
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt 9 REQUIRED)
find_package(CLI11 2.1 REQUIRED)
find_package(pugixml 1.11 REQUIRED)
find_package(Boost 1.74 REQUIRED)   # Boost.Graph is header-only
find_package(Threads REQUIRED)
# OpenBLAS for the runtime's CPU kernels, through pkg-config so that cblas.h is OpenBLAS's own
# (it declares openblas_set_num_threads; Debian's generic cblas.h may be another BLAS's). Its
# headers only: the library is opened on first use (runtime/kernels/blas.cpp), from its soname or
# the file found here.
find_package(PkgConfig REQUIRED)
pkg_check_modules(OpenBLAS REQUIRED openblas)
find_library(BURST_OPENBLAS_LIBRARY NAMES openblas HINTS ${OpenBLAS_LIBRARY_DIRS} REQUIRED)
add_library(burst_openblas_headers INTERFACE)
target_include_directories(burst_openblas_headers SYSTEM INTERFACE ${OpenBLAS_INCLUDE_DIRS})
add_library(burst::openblas_headers ALIAS burst_openblas_headers)
if(BURST_BUILD_TESTS)
  find_package(Catch2 2.13 REQUIRED)
endif()

# Optional backends (tri-state, see BurstOptions.cmake).
if(NOT BURST_WITH_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS CXX QUIET)
endif()
burst_resolve_backend(BURST_WITH_MPI MPI_CXX_FOUND "Install libopenmpi-dev openmpi-bin.")

if(NOT BURST_WITH_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Ampere and Hopper, SASS and PTX for both. Never `native`: it fails where no GPU is
    # visible (CI, this build machine); pass -DCMAKE_CUDA_ARCHITECTURES=... to change.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit QUIET)
    # 12.5: the runtime's cudaGetDriverEntryPointByVersion (the Hopper path's TMA tensor maps),
    # and sm_90a code, which every CUDA build carries; C++20 in nvcc needs 12 too.
    if(CUDAToolkit_FOUND AND CUDAToolkit_VERSION VERSION_LESS 12.5)
      message(STATUS "CUDA toolkit ${CUDAToolkit_VERSION} is older than 12.5: building without CUDA")
      set(CUDAToolkit_FOUND OFF)
    endif()
  endif()
endif()
burst_resolve_backend(BURST_WITH_CUDA CUDAToolkit_FOUND
                      "Install the CUDA toolkit 12.5 or later (nvcc) or set CMAKE_CUDA_COMPILER.")

set(BURST_NCCL_FOUND OFF)
if(BURST_WITH_CUDA_ENABLED AND NOT BURST_WITH_NCCL STREQUAL "OFF")
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  if(NCCL_LIBRARY AND NCCL_INCLUDE_DIR)
    set(BURST_NCCL_FOUND ON)
  endif()
endif()
burst_resolve_backend(BURST_WITH_NCCL BURST_NCCL_FOUND "NCCL needs CUDA; install NCCL under the CUDA toolkit.")

# The Python module (python/): the interpreter and its headers, and pybind11's CMake package.
# Under the sanitizers AUTO leaves it out: an ASan-instrumented module loads only into an
# interpreter started with the ASan runtime preloaded, which python3 is not.
set(BURST_PYTHON_FOUND OFF)
if(BURST_SANITIZE AND BURST_WITH_PYTHON STREQUAL "AUTO")
  message(STATUS "Python module: left out under BURST_SANITIZE (set BURST_WITH_PYTHON=ON to build it anyway)")
elseif(NOT BURST_WITH_PYTHON STREQUAL "OFF")
  find_package(Python3 COMPONENTS Interpreter Development QUIET)
  if(Python3_FOUND)
    find_package(pybind11 CONFIG QUIET)
  endif()
  if(Python3_FOUND AND pybind11_FOUND)
    set(BURST_PYTHON_FOUND ON)
  endif()
endif()
burst_resolve_backend(BURST_WITH_PYTHON BURST_PYTHON_FOUND "Install pybind11-dev python3-dev.")
