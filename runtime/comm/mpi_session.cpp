#include "runtime/comm/mpi_session.hpp"

#include <cstdlib>

#include <mpi.h>

#include "common/error.hpp"

namespace burst::rt {

MpiSession::MpiSession() {
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
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
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
