# Build options. BURST_WITH_* are tri-state: AUTO enables a backend when it is found,
# ON requires it (configure fails with a hint when missing), OFF skips it.
set(BURST_WITH_CUDA AUTO CACHE STRING "Build CUDA kernels (AUTO|ON|OFF)")
set(BURST_WITH_NCCL AUTO CACHE STRING "Build the NCCL communicator (AUTO|ON|OFF)")
set(BURST_WITH_MPI AUTO CACHE STRING "Build the MPI communicator (AUTO|ON|OFF)")
set(BURST_WITH_PYTHON AUTO CACHE STRING "Build the Python module `import burst` (AUTO|ON|OFF)")
foreach(opt BURST_WITH_CUDA BURST_WITH_NCCL BURST_WITH_MPI BURST_WITH_PYTHON)
  set_property(CACHE ${opt} PROPERTY STRINGS AUTO ON OFF)
  if(NOT ${opt} MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "${opt}=${${opt}} is not valid; use AUTO, ON or OFF")
  endif()
endforeach()

option(BURST_BUILD_TESTS "Build the Catch2 test suite" ON)
option(BURST_BUILD_FUZZERS "Build libFuzzer targets (needs clang)" OFF)
option(BURST_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(BURST_SANITIZE_THREADS "Build with ThreadSanitizer (the loopback's rank threads, overlapped collectives)" OFF)
option(BURST_WERROR "Treat warnings as errors" OFF)

# Warnings for our own targets only (third-party headers are system includes).
add_library(burst_warnings INTERFACE)
add_library(burst::warnings ALIAS burst_warnings)
target_compile_options(burst_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
    $<$<BOOL:${BURST_WERROR}>:-Werror>>)
# Unity builds (the CI presets: a third less compile time on 2 cores) make GCC 12 inline
# std::string concatenations across files and then warn -Warray-bounds about its own inlined
# memcpy (GCC PR 105329, a false positive); it does not say that without unity.
if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(burst_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-array-bounds>)
endif()
# clang's -Wpass-failed reports a `#pragma clang loop vectorize(enable)` it did not honour; the
# sanitizer tree builds at -O1, where clang vectorises no loop, so every such pragma (the CPU
# kernels') would fail a -Werror build there for a reason that is the build type, not the code.
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  target_compile_options(burst_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-pass-failed>)
endif()

if(BURST_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
# ThreadSanitizer cannot share a tree with AddressSanitizer. Its tree (the tsan preset) runs the
# tests whose ranks are threads of one process (label `threads`): the loopback jobs, ZeRO's
# collectives overlapped with the step, the kernels' thread pool.
if(BURST_SANITIZE_THREADS)
  if(BURST_SANITIZE)
    message(FATAL_ERROR "BURST_SANITIZE_THREADS and BURST_SANITIZE cannot be on in one tree: use the tsan preset")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
# The libFuzzer targets (tests/fuzz) link the tree's own libraries, so every library of a tree
# that builds them carries libFuzzer's edge coverage too (inline counters: an increment per
# branch, cheap enough for the sanitized tests that run on the same libraries); one sanitizer
# tree serves the tests and the fuzzers, and no library is compiled twice. The parsers'
# libraries also trace their comparisons (tests/fuzz/CMakeLists.txt), which costs the tests
# more and is worth it only there.
if(BURST_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang" OR NOT BURST_SANITIZE)
    message(FATAL_ERROR "BURST_BUILD_FUZZERS=ON needs clang (libFuzzer) and BURST_SANITIZE=ON: "
                        "use the asan preset (cmake --preset asan)")
  endif()
  add_compile_options(-fsanitize-coverage=inline-8bit-counters,pc-table)
endif()

# The test programs' own code (tests/) is compiled for a short build: the code under test is
# built by its libraries with the tree's flags, so the tests exercise exactly what ships. In a
# release tree the test sources build at -O1 (about half the compile time of -O3; what they
# compute themselves is small references); under the sanitizers they are not instrumented
# (instrumenting a Catch2 test file triples its compile time): the libraries are, and ASan's
# allocator and UBSan watch every call into them. BURST_TEST_CODE_OPTIONS is defined below the
# sanitizer flags it undoes. The test precompiled header is built with
# the same options (cmake/BurstPrecompiledHeaders.cmake).
set(BURST_TEST_CODE_OPTIONS $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:Release>>:-O1>)
if(BURST_SANITIZE)
  list(APPEND BURST_TEST_CODE_OPTIONS $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize=address,undefined>)
endif()
# GCC 12 at -O1 inlines std::string's construction from a literal in the test programs and then
# warns -Wstringop-overflow that its own memcpy writes past the 16-byte small buffer, which that
# path never uses (the same family of false positives as GCC PR 105329); the libraries, at -O3,
# do not trip it. Off for the test code only, so -Werror (the CI presets) keeps it everywhere else.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND BURST_TEST_CODE_OPTIONS $<$<COMPILE_LANGUAGE:CXX>:-Wno-stringop-overflow>)
endif()

# Helper: resolve a tri-state option against whether the backend was found.
function(burst_resolve_backend opt found hint)
  if(${opt} STREQUAL "OFF")
    set(${opt}_ENABLED OFF PARENT_SCOPE)
  elseif(${found})
    set(${opt}_ENABLED ON PARENT_SCOPE)
  elseif(${opt} STREQUAL "ON")
    message(FATAL_ERROR "${opt}=ON but it was not found. ${hint}")
  else()
    set(${opt}_ENABLED OFF PARENT_SCOPE)
  endif()
endfunction()

function(burst_print_configuration)
  message(STATUS "burst ${PROJECT_VERSION} configuration:")
  message(STATUS "  build type     ${CMAKE_BUILD_TYPE}")
  message(STATUS "  CUDA           ${BURST_WITH_CUDA_ENABLED} (${BURST_WITH_CUDA})")
  message(STATUS "  NCCL           ${BURST_WITH_NCCL_ENABLED} (${BURST_WITH_NCCL})")
  message(STATUS "  MPI            ${BURST_WITH_MPI_ENABLED} (${BURST_WITH_MPI})")
  message(STATUS "  Python module  ${BURST_WITH_PYTHON_ENABLED} (${BURST_WITH_PYTHON})")
  message(STATUS "  tests          ${BURST_BUILD_TESTS}")
  message(STATUS "  fuzzers        ${BURST_BUILD_FUZZERS}")
  message(STATUS "  sanitizers     ${BURST_SANITIZE} (threads: ${BURST_SANITIZE_THREADS})")
endfunction()
