// The device layer's CUDA backend in a build without the CUDA toolkit (detail/gpu_backend.hpp):
// no GPU is ever visible, and a factory asked for anyway refuses with how to get one.
#include "common/error.hpp"
#include "runtime/device/detail/gpu_backend.hpp"

namespace burst::rt::detail {
namespace {

class UnbuiltCuda final : public CudaBackend {
 public:
  GpuProbe probe() override {
    return {0,
            "this burst was built without CUDA; rebuild with the CUDA toolkit installed (BURST_WITH_CUDA=AUTO or ON)"};
  }
  std::optional<GpuInventory> inventory() override { return std::nullopt; }
  std::unique_ptr<AttentionKernels> attention_kernels(int, bool, bool, std::string_view) override { refuse(); }
  std::unique_ptr<AttentionKernels> step_attention_kernels(StepKernels&, int, bool, std::string_view) override {
    refuse();
  }
  std::unique_ptr<StepKernels> step_kernels(int, bool) override { refuse(); }
  std::unique_ptr<KernelMemory> pinned_host_memory() override { refuse(); }
  std::shared_ptr<MessageCopy> message_copy() override { refuse(); }
  void* stream_of(StepKernels&) override { return nullptr; }
  void* stream_of(AttentionKernels&) override { return nullptr; }

 private:
  [[noreturn]] void refuse() {
    (void)choose_device("cuda", probe(), "--device");  // throws: built without CUDA
    throw Error(Problem{"--device", "cuda", "cpu", "this burst was built without CUDA"});
  }
};

}  // namespace

CudaBackend& cuda_backend() {
  static UnbuiltCuda backend;
  return backend;
}

}  // namespace burst::rt::detail
