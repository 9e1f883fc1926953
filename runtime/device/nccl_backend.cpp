// The device layer's NCCL backend (detail/gpu_backend.hpp), compiled where NCCL is found.
#include "runtime/comm/nccl_bootstrap.hpp"
#include "runtime/cuda/nccl_collectives.hpp"
#include "runtime/cuda/nccl_communicator.hpp"
#include "runtime/device/detail/gpu_backend.hpp"

namespace burst::rt::detail {
namespace {

class Nccl final : public NcclBackend {
 public:
  std::string version() override { return nccl_version(); }
  std::unique_ptr<Communicator> ring_transport(Communicator& job, const NcclOpLists& lists, void* stream) override {
    return gpu::make_nccl_communicator(job, lists, job.local_rank(), stream);
  }
  std::unique_ptr<Communicator> state_collectives(Communicator& job, void* stream) override {
    return gpu::make_nccl_collectives(job, job.local_rank(), stream);
  }
};

}  // namespace

NcclBackend& nccl_backend() {
  static Nccl backend;
  return backend;
}

}  // namespace burst::rt::detail
