// Device choice and the kernels of each device (see device.hpp). The CUDA parts are compiled
// only when burst_cuda is built (BURST_HAVE_CUDA); without them a cuda run is refused by the
// probe ("built without CUDA") before anything else happens.
#include "runtime/device/device.hpp"

#include <cstring>

#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/comm/loopback_communicator.hpp"

#ifdef BURST_HAVE_CUDA
#include "runtime/cuda/cuda_attention_kernels.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/cuda_step_kernels.hpp"
#include "runtime/cuda/device_message_copy.hpp"
#include "runtime/cuda/pinned_host_memory.hpp"
#endif
#ifdef BURST_HAVE_NCCL
#include "runtime/comm/nccl_bootstrap.hpp"
#include "runtime/cuda/nccl_collectives.hpp"
#include "runtime/cuda/nccl_communicator.hpp"
#endif

namespace burst::rt {

const char* to_string(Device device) { return device == Device::Cuda ? "cuda" : "cpu"; }

Device choose_device(std::string_view requested, const GpuProbe& probe, std::string_view option) {
  if (requested == "cpu") return Device::Cpu;
  if (requested.empty()) return probe.count > 0 ? Device::Cuda : Device::Cpu;
  if (requested != "cuda") {
    throw Error(Problem{std::string(option), fmt::format("unknown device '{}'", requested), "cuda, cpu", ""});
  }
  if (probe.count == 0) {
    throw Error(Problem{std::string(option), fmt::format("cuda asked for, but no GPU is visible ({})", probe.reason), "",
                        "run on a GPU node (check nvidia-smi and CUDA_VISIBLE_DEVICES), or use --device cpu"});
  }
  return Device::Cuda;
}

void report_device(Device device, std::string_view requested, const GpuProbe& probe, std::string_view note) {
  if (device == Device::Cuda) {
    fmt::print(stderr, "device: cuda ({} GPU(s) visible to rank 0; a rank drives GPU local rank mod {}){}\n", probe.count,
               probe.count, note);
  } else {
    fmt::print(stderr, "device: cpu ({})\n", requested == "cpu" ? "--device cpu" : "no GPU visible: " + probe.reason);
  }
}

Device job_device(std::string_view requested, const Communicator& comm, std::string_view note) {
  const GpuProbe probe = probe_gpus();
  const Device device = choose_device(requested, probe, "--device");
  if (comm.rank() == 0) report_device(device, requested, probe, note);
  return device;
}

#ifdef BURST_HAVE_CUDA
namespace {

// The CUDA options of a rank's kernels: its GPU is its node-local rank mod the visible GPUs.
// Throws, saying why, where no GPU is visible.
CudaKernelOptions rank_gpu(int local_rank, bool deterministic) {
  const GpuProbe probe = probe_gpus();
  if (probe.count == 0) (void)choose_device("cuda", probe, "device");  // throws, saying why
  CudaKernelOptions options;
  options.device = local_rank % probe.count;
  options.deterministic = deterministic;
  return options;
}

}  // namespace
#endif

std::unique_ptr<AttentionKernels> make_attention_kernels(Device device, int local_rank, bool deterministic, bool timed) {
  if (device == Device::Cpu) return std::make_unique<CpuAttentionKernels>();
#ifdef BURST_HAVE_CUDA
  CudaKernelOptions options = rank_gpu(local_rank, deterministic);
  options.timed = timed;
  return std::make_unique<CudaAttentionKernels>(options);
#else
  (void)local_rank;
  (void)deterministic;
  (void)timed;
  (void)choose_device("cuda", probe_gpus(), "device");  // throws: built without CUDA
  return nullptr;
#endif
}

std::unique_ptr<AttentionKernels> make_step_attention_kernels(Device device, StepKernels& step, int local_rank,
                                                              bool deterministic) {
  if (device == Device::Cpu) return std::make_unique<CpuAttentionKernels>(KernelOptions{}, &step.memory());
#ifdef BURST_HAVE_CUDA
  auto* cuda = dynamic_cast<CudaStepKernels*>(&step);
  if (cuda == nullptr) {
    throw Error(Problem{"--device cuda", "the training step's kernels are not CUDA ones", "CUDA step kernels", ""});
  }
  CudaKernelOptions options = rank_gpu(local_rank, deterministic);
  options.device_times = false;  // the step times its parts; a pass waits for nothing
  return std::make_unique<CudaAttentionKernels>(options, cuda->stream(), cuda->memory());
#else
  (void)step;
  (void)local_rank;
  (void)deterministic;
  (void)choose_device("cuda", probe_gpus(), "device");  // throws: built without CUDA
  return nullptr;
#endif
}

std::unique_ptr<StepKernels> make_step_kernels(Device device, int local_rank, bool deterministic) {
  if (device == Device::Cpu) return std::make_unique<HostStepKernels>();
#ifdef BURST_HAVE_CUDA
  return std::make_unique<CudaStepKernels>(rank_gpu(local_rank, deterministic));
#else
  (void)local_rank;
  (void)deterministic;
  (void)choose_device("cuda", probe_gpus(), "device");  // throws: built without CUDA
  return nullptr;
#endif
}

std::unique_ptr<KernelMemory> make_host_state_memory(Device device) {
#ifdef BURST_HAVE_CUDA
  if (device == Device::Cuda) return gpu::make_pinned_host_memory();
#endif
  (void)device;
  return std::make_unique<HostKernelMemory>();
}

#ifdef BURST_HAVE_CUDA
std::shared_ptr<MessageCopy> message_copy(Device device) {
  return device == Device::Cuda ? gpu::make_device_message_copy() : function_message_copy(host_message_copy, false);
}

std::unique_ptr<Communicator> make_device_self_communicator(CommOptions options) {
  return std::move(make_loopback_communicators(1, options, gpu::make_device_message_copy()).front());
}

void order_messages_on(Communicator& comm, StepKernels& kernels) {
  if (auto* cuda = dynamic_cast<CudaStepKernels*>(&kernels)) comm.use_device_stream(cuda->stream());
}

void order_messages_on(Communicator& comm, AttentionKernels& kernels) {
  if (auto* cuda = dynamic_cast<CudaAttentionKernels*>(&kernels)) comm.use_device_stream(cuda->stream());
}
#else
std::shared_ptr<MessageCopy> message_copy(Device) { return function_message_copy(host_message_copy, false); }

std::unique_ptr<Communicator> make_device_self_communicator(CommOptions) {
  (void)choose_device("cuda", probe_gpus(), "device");  // throws: built without CUDA
  return nullptr;
}

void order_messages_on(Communicator&, StepKernels&) {}
void order_messages_on(Communicator&, AttentionKernels&) {}
#endif

#ifdef BURST_HAVE_NCCL
std::string nccl_build_version() { return nccl_version(); }

namespace {

// NCCL refuses one device as two ranks of a communicator, late and obscurely: refused here first.
void require_gpu_per_rank(const Communicator& job, const char* what) {
  const GpuProbe probe = probe_gpus();
  if (probe.count == 0) (void)choose_device("cuda", probe, what);  // throws, saying why
  if (job.local_size() > probe.count) {
    throw Error(Problem{what, fmt::format("{} ranks on this node share {} GPU(s)", job.local_size(), probe.count),
                        "at most one rank per GPU", "start as many ranks per node as it has GPUs (burst launch prints the line)"});
  }
}

}  // namespace

std::unique_ptr<Communicator> make_nccl_transport(Communicator& job, const NcclOpLists& lists, AttentionKernels& kernels) {
  require_gpu_per_rank(job, "--transport nccl");
  const auto* cuda = dynamic_cast<const CudaAttentionKernels*>(&kernels);
  if (cuda == nullptr) {
    throw Error(Problem{"--transport nccl", "the ring's blocks are not in GPU memory (CPU kernels)", "--device cuda", ""});
  }
  return gpu::make_nccl_communicator(job, lists, job.local_rank(), cuda->stream());
}

std::unique_ptr<Communicator> make_state_transport(Communicator& job, StepKernels& kernels) {
  if (job.size() == 1) return make_device_self_communicator(job.options());
  const auto* cuda = dynamic_cast<const CudaStepKernels*>(&kernels);
  if (cuda == nullptr) {
    throw Error(Problem{"ZeRO collectives over NCCL", "the model state is not in GPU memory (CPU kernels)", "--device cuda", ""});
  }
  require_gpu_per_rank(job, "ZeRO collectives over NCCL");  // so the rank's GPU is its local rank, as the kernels'
  return gpu::make_nccl_collectives(job, job.local_rank(), cuda->stream());
}
#else
std::string nccl_build_version() { return ""; }

std::unique_ptr<Communicator> make_nccl_transport(Communicator&, const NcclOpLists&, AttentionKernels&) {
  throw Error(Problem{"--transport nccl", "this build has no NCCL", "host",
                      "build where the CUDA toolkit and NCCL are found (docs/runtime-cuda.md)"});
}

std::unique_ptr<Communicator> make_state_transport(Communicator& job, StepKernels&) {
  if (job.size() == 1) return make_device_self_communicator(job.options());
  throw Error(Problem{"--device cuda", "this build has no NCCL, which ZeRO's collectives on GPU memory need between processes",
                      "a build with NCCL, or a plan that offloads the state (plan:/strategy/zero/offload)",
                      "build where the CUDA toolkit and NCCL are found (docs/runtime-cuda.md)"});
}
#endif

}  // namespace burst::rt
