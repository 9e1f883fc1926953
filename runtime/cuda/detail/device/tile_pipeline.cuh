// The copy pipeline of the attention kernels (device only): the tiles a block walks flow through
// kStages shared-memory stages, so the loads of the next tiles overlap the matrix products of
// this one.
//
// A block walks entries first .. last - 1 of its tile list; entry e lives in stage
// (e - first) % kStages. Every load of an entry's tiles is one cp.async group:
//   start()      queues entries first .. first + kStages - 2 (the prologue), one group each;
//                anything queued before it (a block's own Q tile) joins the first group
//   advance(e)   waits until entry e's group has landed (at most kStages - 2 groups still in
//                flight), then a barrier: every thread's copies are visible, and every warp is
//                done with entry e - 1, whose stage entry e + kStages - 1 now fills. Returns
//                entry e's stage.
// So each entry costs one barrier, and a load has kStages - 1 entries' compute to land in. A
// group is committed for every entry, even past the end (empty), so the counting stays uniform.
#pragma once

#include "runtime/cuda/detail/device/warp_mma.cuh"

namespace burst::rt::gpu::device {

template <int kStages>
struct TilePipeline {
  static_assert(kStages >= 2);
  int first = 0;
  int last = 0;

  [[nodiscard]] __device__ int stage(int e) const { return (e - first) % kStages; }

  // load(entry, stage) queues the cp.async copies of one entry into one stage.
  template <class Load>
  __device__ void start(Load&& load) const {
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (first + s < last) load(first + s, s);
      copy_async_commit();
    }
  }

  template <class Load>
  __device__ int advance(int e, Load&& load) const {
    copy_async_wait<kStages - 2>();
    __syncthreads();
    const int ahead = e + kStages - 1;
    if (ahead < last) load(ahead, stage(ahead));
    copy_async_commit();
    return stage(e);
  }

  // Waits for every copy still in flight (before a block leaves or reuses its memory).
  __device__ static void drain() { copy_async_wait<0>(); }
};

}  // namespace burst::rt::gpu::device
