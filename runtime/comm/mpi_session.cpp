#include "runtime/comm/mpi_session.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <mpi.h>

#include "common/error.hpp"
#include "common/wait_time.hpp"

namespace burst::rt {
namespace {

// The launcher's name for this process's rank, or "?" before MPI knows it.
const char* launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (const char* value = std::getenv(name)) return value;
  }
  return "?";
}

// Ends the process unless disarm() comes within the deadline.
class StartupWatchdog {
 public:
  explicit StartupWatchdog(double timeout_s)
      : thread_([this, timeout_s] {
          std::unique_lock lock(mutex_);
          if (done_.wait_for(lock, wait_duration(timeout_s), [this] { return disarmed_; })) return;
          std::fprintf(stderr,
                       "rank %s: MPI start-up did not complete within %g s (hint: another rank of the job failed to "
                       "start or is stuck before MPI_Init; a slow start needs a longer --timeout)\n",
                       launcher_rank(), timeout_s);
          std::fflush(stderr);
          std::_Exit(1);
        }) {}
  StartupWatchdog(const StartupWatchdog&) = delete;
  StartupWatchdog& operator=(const StartupWatchdog&) = delete;
  ~StartupWatchdog() {
    {
      const std::lock_guard lock(mutex_);
      disarmed_ = true;
    }
    done_.notify_one();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  bool disarmed_ = false;
  std::thread thread_;  // last: it starts once the members it uses exist
};

}  // namespace

MpiSession::MpiSession(double startup_timeout_s) {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized) {
    throw Error(Problem{"MpiSession", "MPI was already finalized in this process", "",
                        "build one MpiSession in main and keep it until the end of the program"});
  }
  if (initialized) return;
  int provided = 0;
  int rc = MPI_SUCCESS;
  {
    const StartupWatchdog watchdog(startup_timeout_s);
    rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  }
  if (rc != MPI_SUCCESS) {
    throw Error(Problem{"MpiSession", "MPI_Init_thread failed", "", "run the program under mpirun"});
  }
  owns_mpi_ = true;
}

MpiSession::~MpiSession() {
  if (owns_mpi_) MPI_Finalize();
}

bool MpiSession::under_mpirun() {
  // OpenMPI's mpirun sets OMPI_COMM_WORLD_SIZE; PMIx and Hydra (MPICH, Slurm's srun) launchers
  // set PMIX_RANK or PMI_RANK.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

}  // namespace burst::rt
