// Device choice and the kernels of each device (see device.hpp). What needs CUDA or NCCL comes
// from this build's backends (detail/gpu_backend.hpp: CMake compiles the CUDA or the unbuilt
// implementation of each), so this file holds the choices and checks, for every build alike.
#include "runtime/device/device.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/comm/loopback_communicator.hpp"
#include "runtime/device/detail/gpu_backend.hpp"

namespace burst::rt {

const char* to_string(Device device) { return device == Device::Cuda ? "cuda" : "cpu"; }

Device choose_device(std::string_view requested, const GpuProbe& probe, std::string_view option) {
  if (requested == "cpu") return Device::Cpu;
  if (requested.empty()) return probe.count > 0 ? Device::Cuda : Device::Cpu;
  if (requested != "cuda") {
    throw Error(Problem{std::string(option), fmt::format("unknown device '{}'", requested), "cuda, cpu", ""});
  }
  if (probe.count == 0) {
    throw Error(Problem{std::string(option), fmt::format("cuda asked for, but no GPU is visible ({})", probe.reason),
                        "", "run on a GPU node (check nvidia-smi and CUDA_VISIBLE_DEVICES), or use --device cpu"});
  }
  return Device::Cuda;
}

void report_device(Device device, std::string_view requested, const GpuProbe& probe, std::string_view note) {
  if (device == Device::Cuda) {
    fmt::print(stderr, "device: cuda ({} GPU(s) visible to rank 0; a rank drives GPU local rank mod {}){}\n",
               probe.count, probe.count, note);
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

namespace {

// The CPU kernels have one implementation: a kernel path other than auto is a CUDA choice.
void require_cpu_path(std::string_view kernel_path) {
  if (kernel_path != "auto") {
    throw Error(Problem{"--kernel-path", fmt::format("'{}' chooses the CUDA kernels' implementation", kernel_path),
                        "with --device cuda", ""});
  }
}

}  // namespace

std::unique_ptr<AttentionKernels> make_attention_kernels(Device device, int local_rank, bool deterministic, bool timed,
                                                         std::string_view kernel_path) {
  if (device == Device::Cpu) {
    require_cpu_path(kernel_path);
    return std::make_unique<CpuAttentionKernels>();
  }
  return detail::cuda_backend().attention_kernels(local_rank, deterministic, timed, kernel_path);
}

std::unique_ptr<AttentionKernels> make_step_attention_kernels(Device device, StepKernels& step, int local_rank,
                                                              bool deterministic, std::string_view kernel_path) {
  if (device == Device::Cpu) {
    require_cpu_path(kernel_path);
    return std::make_unique<CpuAttentionKernels>(KernelOptions{}, &step.memory());
  }
  return detail::cuda_backend().step_attention_kernels(step, local_rank, deterministic, kernel_path);
}

std::unique_ptr<StepKernels> make_step_kernels(Device device, int local_rank, bool deterministic) {
  if (device == Device::Cpu) return std::make_unique<HostStepKernels>();
  return detail::cuda_backend().step_kernels(local_rank, deterministic);
}

std::unique_ptr<KernelMemory> make_host_state_memory(Device device) {
  if (device == Device::Cuda) return detail::cuda_backend().pinned_host_memory();
  return std::make_unique<HostKernelMemory>();
}

std::shared_ptr<MessageCopy> message_copy(Device device) {
  return device == Device::Cuda ? detail::cuda_backend().message_copy()
                                : function_message_copy(host_message_copy, false);
}

std::unique_ptr<Communicator> make_device_self_communicator(CommOptions options) {
  return std::move(make_loopback_communicators(1, options, detail::cuda_backend().message_copy()).front());
}

void order_messages_on(Communicator& comm, StepKernels& kernels) {
  if (void* stream = detail::cuda_backend().stream_of(kernels)) comm.use_device_stream(stream);
}

void order_messages_on(Communicator& comm, AttentionKernels& kernels) {
  if (void* stream = detail::cuda_backend().stream_of(kernels)) comm.use_device_stream(stream);
}

std::string nccl_build_version() { return detail::nccl_backend().version(); }

namespace {

// NCCL refuses one device as two ranks of a communicator, late and obscurely: refused here first.
void require_gpu_per_rank(const Communicator& job, const char* what) {
  const GpuProbe probe = probe_gpus();
  if (probe.count == 0) (void)choose_device("cuda", probe, what);  // throws, saying why
  if (job.local_size() > probe.count) {
    throw Error(Problem{what, fmt::format("{} ranks on this node share {} GPU(s)", job.local_size(), probe.count),
                        "at most one rank per GPU",
                        "start as many ranks per node as it has GPUs (burst launch prints the line)"});
  }
}

}  // namespace

std::unique_ptr<Communicator> make_nccl_transport(Communicator& job, const NcclOpLists& lists,
                                                  AttentionKernels& kernels) {
  detail::NcclBackend& nccl = detail::nccl_backend();
  if (nccl.version().empty()) return nccl.ring_transport(job, lists, nullptr);  // refused: no NCCL
  require_gpu_per_rank(job, "--transport nccl");
  void* stream = detail::cuda_backend().stream_of(kernels);
  if (stream == nullptr) {
    throw Error(
        Problem{"--transport nccl", "the ring's blocks are not in GPU memory (CPU kernels)", "--device cuda", ""});
  }
  return nccl.ring_transport(job, lists, stream);
}

std::unique_ptr<Communicator> make_device_collectives(Communicator& job, StepKernels& kernels) {
  if (job.size() == 1) return make_device_self_communicator(job.options());
  detail::NcclBackend& nccl = detail::nccl_backend();
  if (nccl.version().empty()) return nccl.state_collectives(job, nullptr);  // refused: no NCCL
  void* stream = detail::cuda_backend().stream_of(kernels);
  if (stream == nullptr) {
    throw Error(Problem{"device collectives over NCCL (ZeRO, tensor parallelism)",
                        "the step's tensors are not in GPU memory (CPU kernels)", "--device cuda", ""});
  }
  require_gpu_per_rank(job, "device collectives over NCCL (ZeRO, tensor parallelism)");  // so the rank's GPU is its
                                                                                         // local rank, as the kernels'
  return nccl.state_collectives(job, stream);
}

std::unique_ptr<Communicator> make_loopback_device_collectives(Communicator& job, const Communicator& group,
                                                               std::span<const int> members, StepKernels& kernels) {
  auto* loopback = dynamic_cast<LoopbackCommunicator*>(&job);
  if (loopback == nullptr || !loopback->reads_device_memory()) {
    throw Error(Problem{"device collectives of a loopback job", "the job is not a --loopback job on the GPU",
                        "a loopback job whose copy moves GPU memory", "a bug in the session: please report it"});
  }
  std::unique_ptr<Communicator> sub = loopback->group_transport(group, members, message_copy(Device::Cuda));
  if (sub) order_messages_on(*sub, kernels);
  return sub;
}

GpuProbe probe_gpus() { return detail::cuda_backend().probe(); }

std::optional<GpuInventory> gpu_inventory() { return detail::cuda_backend().inventory(); }

}  // namespace burst::rt
