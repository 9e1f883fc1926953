// The communicator of a `burst run` job: OpenMPI when the runtime was built with it (the
// process joins mpirun's job, or is a one-rank job when started alone), otherwise the one-rank
// self communicator. The Job owns the MPI session, so MPI is finalized when it ends.
//
// Unless a collective may still be pending (Communicator::pending_collective: one that timed
// out, a rank being stuck): then the Job does not free the communicator nor finalize MPI, which
// would wait for ever or crash once the stuck rank comes, but prints the timeout and ends the
// whole job with abort_job (MPI_Abort), exit code 1. Callers end the job so themselves where
// they can say more (tools/burst/every_rank.hpp); this is the floor when an error unwinds.
#pragma once

#include <memory>

#include "runtime/comm/communicator.hpp"

namespace burst::rt {

class Job {
 public:
  explicit Job(CommOptions options);
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;
  ~Job();

  [[nodiscard]] Communicator& comm() { return *comm_; }

 private:
  struct Session;
  std::unique_ptr<Session> session_;
  std::unique_ptr<Communicator> comm_;
};

}  // namespace burst::rt
