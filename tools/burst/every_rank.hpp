// How a command that runs on every rank of an mpirun job treats failures. Preparing (reading
// the plan, checking it against the job, reading data) sends no message; then one all-reduce
// tells every rank whether all are ready. Bad input usually fails every rank the same way:
// rank 0 reports it and the others end quietly; a rank that alone cannot read a file reports it
// itself and every rank ends. Once ranks communicate, a failure is one rank's and it ends the
// whole job (rt::abort_job), so no rank is left waiting.
//
// Every exchange is guarded so, the readiness all-reduce and the exchanges before it (the
// placement's) as much as the run: a collective that timed out (a rank stalled while preparing,
// say) cannot be withdrawn and may still be pending, and freeing the communicator or finalizing
// MPI with it pending waits for ever, or crashes once the stalled rank resumes. So a failure
// there prints burst's message ("rank 0: allreduce did not complete within 10 s ...") and ends
// the job with MPI_Abort; nothing unwinds through the Job (runtime/comm/job.hpp).
#pragma once

#include <exception>
#include <functional>
#include <string>

#include "runtime/comm/communicator.hpp"

namespace burst::cli {

// `prepare` returns what to execute (its results are the caller's to capture). Returns whether
// it was executed: false on ranks other than 0 after bad input (rank 0 throws it).
[[nodiscard]] bool run_on_every_rank(rt::Communicator& comm, const std::function<std::function<void()>()>& prepare);

// Runs `work`, which communicates: a failure in it (a burst::Error or any exception) ends the
// whole job with its message (rt::abort_job) instead of unwinding; a one-rank job rethrows it.
void run_guarded(rt::Communicator& comm, const std::function<void()>& work);

}  // namespace burst::cli
