// The device layer's NCCL backend in a build without NCCL (detail/gpu_backend.hpp): every
// transport refused by name, with where to build one.
#include "common/error.hpp"
#include "runtime/device/detail/gpu_backend.hpp"

namespace burst::rt::detail {
namespace {

class UnbuiltNccl final : public NcclBackend {
 public:
  std::string version() override { return ""; }
  std::unique_ptr<Communicator> ring_transport(Communicator&, const NcclOpLists&, void*) override {
    throw Error(Problem{"--transport nccl", "this build has no NCCL", "host",
                        "build where the CUDA toolkit and NCCL are found (docs/runtime-cuda.md)"});
  }
  std::unique_ptr<Communicator> state_collectives(Communicator&, void*) override {
    throw Error(Problem{"--device cuda",
                        "this build has no NCCL, which ZeRO's and tensor parallelism's collectives on GPU memory "
                        "need between processes",
                        "a build with NCCL, or a plan that offloads the state (plan:/strategy/zero/offload) and runs "
                        "tp 1",
                        "build where the CUDA toolkit and NCCL are found (docs/runtime-cuda.md)"});
  }
};

}  // namespace

NcclBackend& nccl_backend() {
  static UnbuiltNccl backend;
  return backend;
}

}  // namespace burst::rt::detail
