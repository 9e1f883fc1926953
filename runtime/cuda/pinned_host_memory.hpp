// Page-locked host memory for a model state the plan offloads to the host
// (plan:/strategy/zero/offload; zero_model.hpp), as a KernelMemory the host step kernels keep
// that state in.
//
// Why pinned. A GPU run whose plan offloads keeps the fp32 parameters, gradients and AdamW on
// the host and moves a unit at a time: each unit's parameters up before its forward and
// backward, its gradients down after its backward. From pageable memory the driver first copies
// through a staging buffer of its own, so such a copy runs at a fraction of the bus and holds
// the host thread; from page-locked memory the GPU's copy engine reads and writes the host
// directly at the bus's speed, and the upload returns at once. The same operations as
// HostKernelMemory (it is host memory: the CPU's AdamW and loops run on it), only the allocation
// differs: cudaHostAlloc, freed with cudaFreeHost. Pinning is a scarce resource (it cannot be
// swapped out), so only the model state, sized by the plan, lives here; a failed pin is
// OutOfKernelMemory, reported with the plan item it was for.
//
// Not verified on a GPU: this file compiles in CI (docs/runtime-cuda-training.md).
#pragma once

#include <memory>

#include "runtime/kernels/kernel_memory.hpp"

namespace burst::rt::gpu {

// Page-locked host memory (cudaHostAlloc, portable to every device of the process).
[[nodiscard]] std::unique_ptr<KernelMemory> make_pinned_host_memory();

}  // namespace burst::rt::gpu
