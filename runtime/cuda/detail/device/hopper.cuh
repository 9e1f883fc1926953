// The Hopper (sm_90a) instructions of the Hopper attention path, as inline PTX (device only;
// compiled into the sm_90a kernels alone: flash_forward_sm90.cu, flash_backward_sm90.cu).
//
//   mbarrier        a 64-bit shared-memory barrier with a phase bit: init(count) expects `count`
//                   arrivals a phase; arrive_expect_tx also adds bytes that asynchronous copies
//                   must deliver (complete_tx) before the phase completes; wait(parity) spins
//                   until the phase of that parity has completed. A stage's n-th fill is phase n,
//                   parity n % 2.
//   TMA             cp.async.bulk.tensor.3d: one thread copies a box of a tensor map (a
//                   CUtensorMap in the kernel's parameters, __grid_constant__) into shared
//                   memory, swizzled as the map says, zero-filling what lies outside the tensor,
//                   and reports its bytes to an mbarrier.
//   wgmma           warpgroup (4 warps) matrix product D[64 x N] += A[64 x 16] B[16 x N], bf16 in,
//                   fp32 out, issued asynchronously: fence before the first of a batch (the
//                   registers it reads were written by ordinary code), commit_group closes a
//                   batch, wait_group<N> waits until at most N batches are in flight. A comes
//                   from a shared-memory descriptor or from registers (the mma.sync A layout);
//                   B from a descriptor, K-major or (imm-trans-b = 1) MN-major.
//   setmaxnreg      a warpgroup gives back registers (dec) or takes them from the pool (inc):
//                   the producer needs few, the consumers' accumulators many; the kernel is
//                   launched with the even share (65536 / threads) and rebalances at the start.
//   fence_operand   an empty asm that makes the compiler treat an accumulator (or A operand)
//                   register as read and written there, so no ordinary use of it moves across
//                   a wgmma's issue or its wait, and its register is not reused before the
//                   wait (CUTLASS's warpgroup_fence_operand).
#pragma once

#include <cstdint>

#include <cuda.h>

#include "runtime/cuda/detail/device/warp_mma.cuh"

namespace burst::rt::gpu::device::sm90 {

__device__ inline void barrier_init(std::uint64_t* bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(count) : "memory");
}

// Makes barrier initialisation visible to the asynchronous proxy (TMA) before any copy uses it.
__device__ inline void barrier_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

__device__ inline void barrier_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(bar)) : "memory");
}

__device__ inline void barrier_arrive_expect_bytes(std::uint64_t* bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
}

__device__ inline void barrier_wait(std::uint64_t* bar, std::uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_again:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_again;\n"
      "}\n" ::"r"(shared_address(bar)),
      "r"(parity)
      : "memory");
}

// Box (c0, c1, c2) of a 3-d tensor map into shared memory, reported to `bar`.
__device__ inline void tma_load_3d(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::
          "r"(shared_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(shared_address(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

__device__ inline void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ inline void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int kInFlight>
__device__ inline void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kInFlight) : "memory");
}

template <int kRegisters>
__device__ inline void registers_decrease() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
template <int kRegisters>
__device__ inline void registers_increase() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

template <int kBlocks>
__device__ inline void fence_operand(float (&acc)[kBlocks][4]) {
#pragma unroll
  for (int j = 0; j < kBlocks; ++j) {
#pragma unroll
    for (int i = 0; i < 4; ++i) asm volatile("" : "+f"(acc[j][i])::"memory");
  }
}
// The same for an A operand in registers: wgmma reads it asynchronously too, so it must stay in
// its registers, unchanged, until the wait (fenced after the wait, it is live until then).
template <int kBlocks>
__device__ inline void fence_operand(std::uint32_t (&a)[kBlocks][4]) {
#pragma unroll
  for (int j = 0; j < kBlocks; ++j) {
#pragma unroll
    for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(a[j][i])::"memory");
  }
}

// The 32 accumulators of a 64 x 64 product, as the PTX operand list wants them.
#define BURST_WGMMA_D64(d)                                                                                     \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]),     \
      "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), \
      "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), \
      "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), \
      "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
#define BURST_WGMMA_D64_LIST                                                                                        \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, " \
  "%24, %25, %26, %27, %28, %29, %30, %31}"

// d (+)= A B, 64 x 64 x 16, A and B K-major descriptors. `accumulate` false: d = A B.
__device__ inline void wgmma_64x64_ss(float (&d)[8][4], std::uint64_t a, std::uint64_t b, bool accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " BURST_WGMMA_D64_LIST
      ", %32, %33, p, 1, 1, 0, 0;\n"
      "}\n"
      : BURST_WGMMA_D64(d)
      : "l"(a), "l"(b), "r"(static_cast<int>(accumulate)));
}

// d += A B, 64 x 64 x 16, A from registers (the mma.sync A fragment of each warp's 16 rows), B
// an MN-major descriptor.
__device__ inline void wgmma_64x64_rs_mn(float (&d)[8][4], const std::uint32_t (&a)[4], std::uint64_t b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " BURST_WGMMA_D64_LIST
      ", {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n"
      "}\n"
      : BURST_WGMMA_D64(d)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "n"(1));
}

#undef BURST_WGMMA_D64
#undef BURST_WGMMA_D64_LIST

}  // namespace burst::rt::gpu::device::sm90
