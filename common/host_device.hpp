// BURST_HOST_DEVICE marks a function that both compilers build: g++ for the CPU runtime and
// its tests, nvcc for the CUDA kernels (where it means __host__ __device__). One definition of
// the arithmetic, tested on the CPU, is what the GPU runs.
//
// Such functions must stay inside what device code allows: no exceptions, no std containers,
// no virtual calls, no host-only library functions (runtime/kernels/hd/math.hpp wraps the
// few math functions whose host and device spellings differ).
#pragma once

#if defined(__CUDACC__)
#define BURST_HOST_DEVICE __host__ __device__
#else
#define BURST_HOST_DEVICE
#endif
