// Rank 0's NCCL unique id on every rank (see nccl_bootstrap.hpp).
#include "runtime/comm/nccl_bootstrap.hpp"

#include <cstring>

#include <fmt/format.h>
#include <nccl.h>

#include "common/error.hpp"

namespace burst::rt {

static_assert(kNcclUniqueIdBytes == NCCL_UNIQUE_ID_BYTES && sizeof(ncclUniqueId) == NCCL_UNIQUE_ID_BYTES,
              "the NCCL unique id changed size");

NcclUniqueIdBytes shared_nccl_unique_id(Communicator& comm) {
  NcclUniqueIdBytes bytes{};
  if (comm.rank() == 0) {
    ncclUniqueId id;
    if (const ncclResult_t status = ncclGetUniqueId(&id); status != ncclSuccess) {
      throw Error(Problem{"rank 0: ncclGetUniqueId", ncclGetErrorString(status), "",
                          "NCCL_DEBUG=WARN says more; NCCL_SOCKET_IFNAME picks the bootstrap interface"});
    }
    std::memcpy(bytes.data(), &id, sizeof id);
  }
  comm.broadcast(MutBuffer(bytes.data(), bytes.size(), DType::Bytes), 0);
  return bytes;
}

std::string nccl_version() {
  int code = 0;
  if (ncclGetVersion(&code) != ncclSuccess) return "unknown";
  // NCCL_VERSION(X,Y,Z) is X*10000 + Y*100 + Z since 2.9.
  return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
}

}  // namespace burst::rt
