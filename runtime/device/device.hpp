// Which device computes a run's attention, and the kernels for it.
//
// `burst run --device cuda|cpu`: cuda runs the block-pair kernels of every ring step on the
// rank's GPU (runtime/cuda/), cpu the tiled CPU kernels; the schedule, the communication and
// the checks are the same either way (attention_kernels.hpp). Without --device a run takes
// the GPU when one is visible and the CPU otherwise, and says which. A rank drives GPU
// (node-local rank mod visible GPUs), so mpirun's ranks on a node spread over its GPUs.
//
// The probe never fails: no driver, no device, or a build without CUDA all read as "no GPU
// visible" with the reason, which the error for an explicit --device cuda repeats.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "runtime/comm/communicator.hpp"
#include "runtime/comm/loopback_communicator.hpp"
#include "runtime/kernels/attention_kernels.hpp"
#include "runtime/schedule/nccl_op_list.hpp"
#include "runtime/training/step_kernels.hpp"

namespace burst::rt {

enum class Device { Cpu, Cuda };

[[nodiscard]] const char* to_string(Device device);  // "cpu", "cuda"

struct GpuProbe {
  int count = 0;       // GPUs visible to this process
  std::string reason;  // why none is visible (count == 0)
};

// cudaGetDeviceCount, or why it could not count; "built without CUDA" when it was not built in.
[[nodiscard]] GpuProbe probe_gpus();

// What the first visible GPU is, for `--topology local` on a GPU machine: CUDA's name, PCI
// address and memory, its compute capability, and whether GPUs 0 and 1 reach each other with
// native atomics (NVLink does; PCIe peer access does not). Null where no GPU is visible.
struct GpuInventory {
  int count = 0;
  std::string cuda_name;
  std::string pci_bus_id;  // "0000:3b:00.0", as sysfs names it
  double memory_bytes = 0;
  int sm = 0;           // major * 10 + minor
  bool nvlink = false;  // between GPUs 0 and 1 (false with one GPU)
};
[[nodiscard]] std::optional<GpuInventory> gpu_inventory();

// The device of `requested` ("cuda", "cpu", or empty: cuda when a GPU is visible, else cpu).
// Throws burst::Error at `option` (e.g. "--device") when cuda is asked for and none is visible.
[[nodiscard]] Device choose_device(std::string_view requested, const GpuProbe& probe, std::string_view option);

// What rank 0 says on stderr about a job's device and why: "device: cuda (2 GPU(s) visible to
// rank 0; a rank drives GPU local rank mod 2)<note>" or "device: cpu (no GPU visible:
// <reason>)" / "device: cpu (--device cpu)". `burst run` and `burst calibrate` say it so.
void report_device(Device device, std::string_view requested, const GpuProbe& probe, std::string_view note = "");

// choose_device on this process's probe (option "--device"), then report_device on rank 0.
[[nodiscard]] Device job_device(std::string_view requested, const Communicator& comm, std::string_view note = "");

// The kernels of `device` on this rank; `local_rank` picks the GPU (local_rank mod count).
// `deterministic`: CUDA kernels without float atomics (bit-reproducible runs); `timed`: each
// CUDA call waits for its kernels and reports their time (a traced run); `kernel_path`: the
// CUDA attention kernels' implementation, forward and backward (runtime/cuda/kernel_path.hpp:
// "auto", "mma.sync", "wgmma");
// anything but "auto" on cpu, or a name that is none of those, throws burst::Error.
[[nodiscard]] std::unique_ptr<AttentionKernels> make_attention_kernels(Device device, int local_rank,
                                                                       bool deterministic = false, bool timed = false,
                                                                       std::string_view kernel_path = "auto");

// The attention kernels of a training step on `device`, computing in `step`'s memory (the
// step's tensors read in place): the CPU kernels over it, or on cuda CUDA kernels on the step
// kernels' own stream and memory pool, so the two are ordered by that one stream.
[[nodiscard]] std::unique_ptr<AttentionKernels> make_step_attention_kernels(Device device, StepKernels& step,
                                                                            int local_rank, bool deterministic = false,
                                                                            std::string_view kernel_path = "auto");

// The training step's operations on `device` (step_kernels.hpp): host fp32 on cpu, the rank's
// GPU (local_rank mod visible GPUs) on cuda. `deterministic` is accepted as for the attention
// kernels; every CUDA step kernel is deterministic already.
[[nodiscard]] std::unique_ptr<StepKernels> make_step_kernels(Device device, int local_rank, bool deterministic = false);

// How a --loopback job's rank threads copy their messages: on cuda the ring's blocks are GPU
// memory, copied GPU to GPU in the order of CUDA events on the ranks' streams
// (runtime/cuda/device_message_copy.hpp); on cpu, memcpy.
[[nodiscard]] std::shared_ptr<MessageCopy> message_copy(Device device);

// Tells `comm` which stream this rank's GPU work is queued on, so the GPU loopback orders its
// messages by events on it (Communicator::use_device_stream); nothing for CPU kernels.
void order_messages_on(Communicator& comm, StepKernels& kernels);
void order_messages_on(Communicator& comm, AttentionKernels& kernels);

// The NCCL this build carries ring transfers over ("2.28.9"), or "" when it has none (the CUDA
// toolkit or NCCL was not found).
[[nodiscard]] std::string nccl_build_version();

// The ring's transfers over NCCL between the job's GPUs, on GPU (local rank mod visible GPUs)
// as the kernels; collectives stay on `job` (runtime/cuda/nccl_communicator.hpp). Each NCCL
// group waits for the work `kernels` (CUDA ones) queued before it. Collective over `job`.
// Throws burst::Error when the build has no NCCL or NCCL fails.
[[nodiscard]] std::unique_ptr<Communicator> make_nccl_transport(Communicator& job, const NcclOpLists& lists,
                                                                AttentionKernels& kernels);

// Host memory for a model state kept on the host beside a `device` step: page-locked on cuda
// (runtime/cuda/pinned_host_memory.hpp: the units' copies run at the bus's speed), plain on cpu.
[[nodiscard]] std::unique_ptr<KernelMemory> make_host_state_memory(Device device);

// A one-rank communicator that reads GPU memory (the loopback with the device copy).
[[nodiscard]] std::unique_ptr<Communicator> make_device_self_communicator(CommOptions options);

// Collectives on the GPU memory of `kernels` (CUDA step kernels) over the ranks of `group` (the
// job's communicator, or a subgroup of it: ZeRO's sharding group, a tensor-parallel group): over
// NCCL between processes (runtime/cuda/nccl_collectives.hpp; its unique id broadcast over
// `group`, which outlives the result; each collective waits for the work `kernels` queued
// before it), or a device self communicator for a group of one. Collective over `group`.
// Throws burst::Error when the build has no NCCL (several processes), the kernels are not CUDA
// ones, a node has more ranks than GPUs, or NCCL fails.
[[nodiscard]] std::unique_ptr<Communicator> make_device_collectives(Communicator& group, StepKernels& kernels);

// The same for a --loopback job on one GPU (`job`, whose GPU copy moves device memory itself):
// null where `group` is the job (its own communicator serves), else this rank's loopback sub-job
// of `members` (a subgroup's, whole job included) with a GPU copy of its own, its messages
// ordered on the stream of `kernels` (LoopbackCommunicator::group_transport). Throws
// burst::Error when `job` is not such a loopback.
[[nodiscard]] std::unique_ptr<Communicator> make_loopback_device_collectives(Communicator& job,
                                                                             const Communicator& group,
                                                                             std::span<const int> members,
                                                                             StepKernels& kernels);

}  // namespace burst::rt
