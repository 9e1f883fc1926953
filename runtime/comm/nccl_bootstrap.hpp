// How the ranks of an mpirun job agree on an NCCL communicator: NCCL needs one unique id per
// communicator, made by one rank (ncclGetUniqueId opens the bootstrap socket there) and known to
// all before any calls ncclCommInitRank. The MPI job already connects every rank, so rank 0
// makes the id and the communicator broadcasts its 128 bytes (Communicator::broadcast); every
// rank then selects its GPU (node-local rank, Communicator::local_rank) before init, as NCCL
// requires (a device per rank; one device may not be two ranks of one communicator).
// Further communicators (one per concurrent ring and level, docs/runtime-comm.md) are split
// from the first with ncclCommSplit and need no new id.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "runtime/comm/communicator.hpp"

namespace burst::rt {

inline constexpr std::size_t kNcclUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES, checked in the .cpp
using NcclUniqueIdBytes = std::array<std::byte, kNcclUniqueIdBytes>;

// Collective: rank 0's fresh ncclGetUniqueId on every rank. Throws burst::Error with NCCL's
// message (on rank 0; the others then time out in the broadcast like any collective).
[[nodiscard]] NcclUniqueIdBytes shared_nccl_unique_id(Communicator& comm);

// NCCL's version as "2.28.9" (ncclGetVersion), for run reports and error messages.
[[nodiscard]] std::string nccl_version();

}  // namespace burst::rt
