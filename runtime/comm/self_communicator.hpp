// A communicator of one rank, so the executor and its tests run without mpirun.
//
// Sends to self behave like MPI's eager sends: the payload is copied at isend (the send is
// complete at once) and delivered to the first posted receive with the same tag (channel,
// step, level; comm/tag.hpp), or kept until one is posted. Collectives over one rank are
// identities: allreduce_sum leaves the data as it is, gather_to_root copies `mine`, barrier
// returns. A receive nothing was sent for waits out its timeout and fails with the same error
// an MPI rank would give: one process cannot deliver to itself while it waits.
#pragma once

#include <memory>

#include "runtime/comm/communicator.hpp"

namespace burst::rt {

std::unique_ptr<Communicator> make_self_communicator(CommOptions options = {});

}  // namespace burst::rt
