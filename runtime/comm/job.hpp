// The communicator of a `burst run` job: OpenMPI when the runtime was built with it (the
// process joins mpirun's job, or is a one-rank job when started alone), otherwise the one-rank
// self communicator. The Job owns the MPI session, so MPI is finalized when it ends.
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
