// The device layer's CUDA backend (detail/gpu_backend.hpp), compiled where burst_cuda is built.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/cuda/cuda_attention_kernels.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/cuda_step_kernels.hpp"
#include "runtime/cuda/device_count.hpp"
#include "runtime/cuda/device_message_copy.hpp"
#include "runtime/cuda/pinned_host_memory.hpp"
#include "runtime/device/detail/gpu_backend.hpp"

namespace burst::rt::detail {
namespace {

class Cuda final : public CudaBackend {
 public:
  GpuProbe probe() override {
    const gpu::CudaDeviceCount devices = gpu::cuda_device_count();
    return {devices.count, devices.reason};
  }

  std::optional<GpuInventory> inventory() override {
    const gpu::CudaDeviceCount devices = gpu::cuda_device_count();
    if (devices.count == 0) return std::nullopt;
    cudaDeviceProp prop{};
    gpu::check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties(0)");
    GpuInventory out;
    out.count = devices.count;
    out.cuda_name = prop.name;
    out.pci_bus_id = fmt::format("{:04x}:{:02x}:{:02x}.0", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
    out.memory_bytes = static_cast<double>(prop.totalGlobalMem);
    out.sm = prop.major * 10 + prop.minor;
    if (devices.count > 1) {
      int atomics = 0;
      gpu::check_cuda(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, 0, 1),
                      "cudaDeviceGetP2PAttribute(native atomics, 0, 1)");
      out.nvlink = atomics != 0;
    }
    return out;
  }

  std::unique_ptr<AttentionKernels> attention_kernels(int local_rank, bool deterministic, bool timed,
                                                      std::string_view kernel_path) override {
    CudaKernelOptions options = rank_gpu(local_rank, deterministic);
    options.timed = timed;
    options.path = gpu::kernel_path_choice(kernel_path);
    return std::make_unique<CudaAttentionKernels>(options);
  }

  std::unique_ptr<AttentionKernels> step_attention_kernels(StepKernels& step, int local_rank, bool deterministic,
                                                           std::string_view kernel_path) override {
    auto* cuda = dynamic_cast<CudaStepKernels*>(&step);
    if (cuda == nullptr) {
      throw Error(Problem{"--device cuda", "the training step's kernels are not CUDA ones", "CUDA step kernels", ""});
    }
    CudaKernelOptions options = rank_gpu(local_rank, deterministic);
    options.device_times = false;  // the step times its parts; a pass waits for nothing
    options.path = gpu::kernel_path_choice(kernel_path);
    return std::make_unique<CudaAttentionKernels>(options, cuda->stream(), cuda->memory());
  }

  std::unique_ptr<StepKernels> step_kernels(int local_rank, bool deterministic) override {
    return std::make_unique<CudaStepKernels>(rank_gpu(local_rank, deterministic));
  }

  std::unique_ptr<KernelMemory> pinned_host_memory() override { return gpu::make_pinned_host_memory(); }
  std::shared_ptr<MessageCopy> message_copy() override { return gpu::make_device_message_copy(); }

  void* stream_of(StepKernels& kernels) override {
    auto* cuda = dynamic_cast<CudaStepKernels*>(&kernels);
    return cuda != nullptr ? cuda->stream() : nullptr;
  }
  void* stream_of(AttentionKernels& kernels) override {
    auto* cuda = dynamic_cast<CudaAttentionKernels*>(&kernels);
    return cuda != nullptr ? cuda->stream() : nullptr;
  }

 private:
  // A rank's GPU is its node-local rank mod the visible GPUs. Throws, saying why, where none is visible.
  CudaKernelOptions rank_gpu(int local_rank, bool deterministic) {
    const GpuProbe visible = probe();
    if (visible.count == 0) (void)choose_device("cuda", visible, "device");  // throws, saying why
    CudaKernelOptions options;
    options.device = local_rank % visible.count;
    options.deterministic = deterministic;
    return options;
  }
};

}  // namespace

CudaBackend& cuda_backend() {
  static Cuda backend;
  return backend;
}

}  // namespace burst::rt::detail
