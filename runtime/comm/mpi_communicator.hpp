// The OpenMPI communicator: every rank of MPI_COMM_WORLD, on a private duplicate of it (so our
// tags can never match another library's messages) whose errors are returned, not fatal, and
// become burst::Error.
//
// Mapping: isend / irecv -> MPI_Isend / MPI_Irecv of MPI_FLOAT with the tag of comm/tag.hpp,
// checked against the communicator's MPI_TAG_UB; barrier, allreduce_sum, gather_to_root ->
// MPI_Ibarrier, MPI_Iallreduce (in place, MPI_SUM), MPI_Igather to rank 0; a wait polls
// MPI_Test (communicator.cpp says why). A receive that times out is cancelled (MPI_Cancel
// then MPI_Wait: cancelling a receive is local and immediate), so the program can still
// finalize. A send or collective that times out cannot be withdrawn (OpenMPI does not cancel
// sends; cancelling a collective is erroneous): its request is freed, its buffer may still be
// read, and the job should end with abort_job (MPI_Abort on this communicator).
//
// Requires an MpiSession (mpi_session.hpp) alive for the communicator's whole life.
#pragma once

#include <memory>

#include "runtime/comm/communicator.hpp"
#include "runtime/comm/mpi_session.hpp"

namespace burst::rt {

std::unique_ptr<Communicator> make_mpi_communicator(CommOptions options = {});

}  // namespace burst::rt
