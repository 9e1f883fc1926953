// RAII for the MPI library: MPI_Init_thread when constructed, MPI_Finalize when destroyed.
//
// MPI may be initialised once per process and finalised once, after every communicator made
// with make_mpi_communicator is destroyed (they free their MPI communicator). Build one
// MpiSession in main, before anything MPI, and let it outlive the communicators. A session
// built while MPI is already initialised (by a host program) neither initialises nor
// finalises it. The session asks for MPI_THREAD_FUNNELED: the kernels run their own worker
// threads, but only the thread that created the session calls MPI.
//
// Start-up has a deadline too: MPI_Init_thread waits for every rank of the job (OpenMPI's
// start-up exchange), so one rank that is stuck before or inside it would leave the others
// waiting with no timeout. A watchdog thread ends this process after `startup_timeout_s` with
//   "rank R: MPI start-up did not complete within 120 s (hint: ...)"
// (R from the launcher's environment), and mpirun then ends the job.
#pragma once

namespace burst::rt {

class MpiSession {
 public:
  explicit MpiSession(double startup_timeout_s = 120);
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  ~MpiSession();

  // Whether this process was started by mpirun / mpiexec (or another PMI launcher): its
  // environment names a rank. A singleton run (plain ./program) is a one-rank MPI job.
  [[nodiscard]] static bool under_mpirun();

 private:
  bool owns_mpi_ = false;
};

}  // namespace burst::rt
