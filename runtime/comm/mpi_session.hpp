// RAII for the MPI library: MPI_Init_thread when constructed, MPI_Finalize when destroyed.
//
// MPI may be initialised once per process and finalised once, after every communicator made
// with make_mpi_communicator is destroyed (they free their MPI communicator). Build one
// MpiSession in main, before anything MPI, and let it outlive the communicators. A session
// built while MPI is already initialised (by a host program) neither initialises nor
// finalises it. The session asks for MPI_THREAD_FUNNELED: the kernels run their own worker
// threads, but only the thread that created the session calls MPI.
#pragma once

namespace burst::rt {

class MpiSession {
 public:
  MpiSession();
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
