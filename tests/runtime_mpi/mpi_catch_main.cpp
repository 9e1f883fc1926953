// The main of the MPI test executables: every rank runs the same Catch2 tests in the same
// order (mpirun passes them the same arguments), between MPI_Init and MPI_Finalize (an
// MpiSession).
//
// A failed assertion on any rank must fail the whole test, and must not leave the other ranks
// waiting for messages the failing rank will never send: when a test case ends with a failure
// on this rank, the listener below prints it and calls MPI_Abort, which ends every rank and
// makes mpirun exit non-zero. A run where every rank passes returns 0 from every rank.
#define CATCH_CONFIG_EXTERNAL_INTERFACES  // the listener base; the implementation is catch_session.cpp
#include <catch2/catch.hpp>

#include <cstdio>

#include <mpi.h>

#include "runtime/comm/mpi_session.hpp"
#include "tests/catch_session.hpp"

namespace {

struct AbortOnFailure : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    if (stats.totals.assertions.failed == 0) return;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "rank %d: test case '%s' failed; aborting the job\n", rank, stats.testInfo.name.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(AbortOnFailure)

int main(int argc, char* argv[]) {
  const burst::rt::MpiSession session;
  return burst::test::run_catch_session(argc, argv);
}
