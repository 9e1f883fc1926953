// How a burst process keeps its host memory from one step to the next.
//
// glibc's malloc serves a request of 128 KiB or more with a fresh mapping from the kernel and
// unmaps it on free, and hands free memory at the top of its heap back to the kernel once more
// than 128 KiB lie there (it raises both limits as large blocks come and go, never past the
// largest block it has seen freed). A ring step allocates and frees blocks of that size over
// and over: travelling blocks and their accumulators, bf16 operands widened to fp32 for the
// kernels, the backward's private dQ for each extra worker. So each step mapped them anew, and
// the kernel zero-filled every 4 KiB page on its first touch: one page fault a page. Where
// faults are dear (a virtual machine's: they took 16% of a 4-rank attention run's samples under
// `perf` on this project's 2-core machine) that made the CPU attention backward 1.4-2.5x slower
// than the same kernels on memory they had used before: 0.28-0.29 s against 0.12-0.13 s for a
// ring of 4, 0.17-0.19 s against 0.12 s for burst-usp (docs/fidelity.md, "The local machine").
//
// keep_freed_host_memory() sets both limits to their largest (a 32 MiB mapping threshold, the
// most glibc allows, and no trimming), so freed blocks stay in the process and the next step
// reuses them, as the GPU path's stream-ordered pool keeps device memory
// (runtime/cuda/detail/device_kernel_memory.hpp). Blocks above 32 MiB are still mapped each
// time; their work grows faster than their pages. The cost: the process keeps its peak heap
// until it ends, which a run's memory report counts as its peak anyway.
//
// host_page_faults(): this process's minor page faults so far (getrusage), the pages the kernel
// mapped on first touch. The training run counts them per step (runtime/kernels/
// device_traffic.hpp); once the heap has grown to a step's peak, a step takes next to none.
#pragma once

#include <cstdint>

namespace burst {

// Every runtime process calls it once, before it allocates its tensors (the burst CLI at start).
// False where the allocator is not glibc's malloc or refused the settings (a sanitizer's
// allocator takes malloc's place and ignores them): the process then maps as before.
bool keep_freed_host_memory();

[[nodiscard]] std::uint64_t host_page_faults();

}  // namespace burst
