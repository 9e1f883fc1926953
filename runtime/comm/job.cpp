// Choosing the job's communicator (see job.hpp).
#include "runtime/comm/job.hpp"

#include "runtime/comm/loopback_communicator.hpp"
#if BURST_RUNTIME_HAS_MPI
#include "runtime/comm/mpi_communicator.hpp"
#endif

namespace burst::rt {

#if BURST_RUNTIME_HAS_MPI
struct Job::Session {
  explicit Session(double timeout_s) : mpi(timeout_s) {}
  MpiSession mpi;
};
Job::Job(CommOptions options)
    : session_(std::make_unique<Session>(options.timeout_s)), comm_(make_mpi_communicator(options)) {}
#else
struct Job::Session {};
Job::Job(CommOptions options) : comm_(make_self_communicator(options)) {}
#endif

// The communicator goes first: it may still hold MPI requests that must be freed before MPI ends.
// A collective that may still be pending cannot be freed at all: the job ends instead (job.hpp).
Job::~Job() {
  if (!comm_->pending_collective().empty()) abort_job(*comm_, comm_->pending_collective());
  comm_.reset();
}

}  // namespace burst::rt
