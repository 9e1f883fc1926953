// The Ampere instructions the attention kernels are built from, as inline PTX (device only).
//
//   cp.async        16 bytes global -> shared without passing through registers; a source size
//                   of 0 fills zeros (the padding rows past a block's end); 4 or 8 bytes for
//                   one per-row value (.ca: through L1). Grouped by
//                   commit_group; wait_group N waits until at most N groups are in flight.
//   ldmatrix .x4    four 8x8 b16 matrices from shared memory: lanes 8i..8i+7 give the row
//                   addresses of matrix i, and lane l receives in register i the elements
//                   (row l/4, columns 2(l%4), 2(l%4)+1) of matrix i; .trans delivers the
//                   transposed matrix (rows 2(l%4), 2(l%4)+1 of column l/4).
//   mma m16n8k16    D[16x8] += A[16x16] B[16x8], bf16 inputs, fp32 accumulators. With
//                   g = lane / 4 and t = lane % 4 (PTX ISA, "Matrix Fragments for mma.m16n8k16
//                   with floating point type"):
//                     A regs a0..a3: (row g, cols 2t..2t+1), (row g+8, cols 2t..), (row g,
//                                    cols 2t+8..), (row g+8, cols 2t+8..), low half first
//                     B regs b0, b1: (rows k = 2t..2t+1, col n = g), (rows 2t+8.., col g)
//                     C/D c0..c3:    (row g, cols 2t, 2t+1), (row g+8, cols 2t, 2t+1)
//                   so ldmatrix of a row-major tile gives A (16 rows x 16) directly, ldmatrix of
//                   a row-major [n][k] tile gives B ("col" layout), and ldmatrix .trans of a
//                   row-major [k][n] tile gives B as well. The C fragments of two adjacent
//                   8-column blocks, packed to bf16 pairs, are exactly an A fragment: that is
//                   how P (scores) feeds P V without leaving registers.
//   cvt bf16x2      two floats to a bf16 pair, round to nearest even (common/bf16.hpp's rounding).
//   ex2.approx      2^x (relative error ~2^-22; ex2(-inf) = +0, which masking relies on).
#pragma once

#include <cstdint>

namespace burst::rt::gpu::device {

__device__ inline std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

__device__ inline void copy_async_16(void* shared, const void* global, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(shared)), "l"(global),
               "r"(valid ? 16 : 0)
               : "memory");
}

// 4 or 8 bytes (one position, lse or D) global -> shared, through L1 (.ca: .cg takes 16 only).
template <typename T>
__device__ inline void copy_async_small(T* shared, const T* global) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(shared_address(shared)), "l"(global),
               "n"(static_cast<int>(sizeof(T)))
               : "memory");
}

__device__ inline void copy_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int kInFlight>
__device__ inline void copy_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kInFlight) : "memory");
}

__device__ inline void ldmatrix_x4(std::uint32_t (&r)[4], const void* shared) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(shared)));
}

__device__ inline void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* shared) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(shared)));
}

// d += A B for one 16x8 block: a is an A fragment, (b0, b1) a B fragment.
__device__ inline void mma_bf16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// (lo, hi) as a bf16 pair, lo in the low half (the element with the smaller column).
__device__ inline std::uint32_t pack_bf16(float lo, float hi) {
  std::uint32_t packed;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(packed) : "f"(hi), "f"(lo));  // first source -> upper half
  return packed;
}

// e^x as 2^(x log2 e); -inf gives exactly 0.
struct FastExp {
  __device__ float operator()(float x) const {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x * 1.4426950408889634f));
    return y;
  }
};

}  // namespace burst::rt::gpu::device
