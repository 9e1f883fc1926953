// What the CUDA toolkit and NCCL add to the device layer, behind two interfaces, so that
// device.cpp chooses by the Device a run asked for and never by #ifdef. CMake compiles one
// implementation of each per build:
//   CudaBackend  cuda_backend.cpp where burst_cuda is built (the CUDA kernels, pinned memory, the
//                GPU loopback's copy, the probe), unbuilt_cuda_backend.cpp elsewhere (no GPU:
//                every factory refuses with "built without CUDA")
//   NcclBackend  nccl_backend.cpp where NCCL is found (the rings' transport, ZeRO's collectives),
//                unbuilt_nccl_backend.cpp elsewhere ("this build has no NCCL")
// Internal to runtime/device: callers use device.hpp.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "runtime/comm/communicator.hpp"
#include "runtime/comm/loopback_communicator.hpp"
#include "runtime/device/device.hpp"
#include "runtime/kernels/attention_kernels.hpp"
#include "runtime/schedule/nccl_op_list.hpp"
#include "runtime/training/step_kernels.hpp"

namespace burst::rt::detail {

class CudaBackend {
 public:
  virtual ~CudaBackend() = default;
  [[nodiscard]] virtual GpuProbe probe() = 0;
  [[nodiscard]] virtual std::optional<GpuInventory> inventory() = 0;
  // GPU (local_rank mod visible GPUs)'s kernels; `timed`: each call waits and reports its time.
  // `kernel_path`: "auto", "mma.sync" or "wgmma" (runtime/cuda/kernel_path.hpp); another name throws.
  [[nodiscard]] virtual std::unique_ptr<AttentionKernels> attention_kernels(int local_rank, bool deterministic,
                                                                            bool timed,
                                                                            std::string_view kernel_path) = 0;
  // On `step`'s stream and memory (CUDA step kernels; burst::Error for others).
  [[nodiscard]] virtual std::unique_ptr<AttentionKernels> step_attention_kernels(StepKernels& step, int local_rank,
                                                                                 bool deterministic,
                                                                                 std::string_view kernel_path) = 0;
  [[nodiscard]] virtual std::unique_ptr<StepKernels> step_kernels(int local_rank, bool deterministic) = 0;
  [[nodiscard]] virtual std::unique_ptr<KernelMemory> pinned_host_memory() = 0;
  [[nodiscard]] virtual std::shared_ptr<MessageCopy> message_copy() = 0;
  // The stream CUDA kernels queue on (a cudaStream_t); null for other kernels.
  [[nodiscard]] virtual void* stream_of(StepKernels& kernels) = 0;
  [[nodiscard]] virtual void* stream_of(AttentionKernels& kernels) = 0;
};

class NcclBackend {
 public:
  virtual ~NcclBackend() = default;
  [[nodiscard]] virtual std::string version() = 0;  // "" without NCCL
  // The job's checks (a GPU a rank) are device.cpp's; these make the communicators.
  [[nodiscard]] virtual std::unique_ptr<Communicator> ring_transport(Communicator& job, const NcclOpLists& lists,
                                                                     void* stream) = 0;
  [[nodiscard]] virtual std::unique_ptr<Communicator> state_collectives(Communicator& job, void* stream) = 0;
};

// This build's.
[[nodiscard]] CudaBackend& cuda_backend();
[[nodiscard]] NcclBackend& nccl_backend();

}  // namespace burst::rt::detail
