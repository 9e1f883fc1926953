// A collective that timed out ends the job when its error unwinds through the Job: the last rank
// stalls (60 s) before an all-reduce the others give up on after 5 s, and their error leaves the
// Job's scope. The Job must print the timeout and end the job with MPI_Abort, not free the
// communicator with the all-reduce pending and then wait in MPI_Finalize for ever (or crash
// when the stalled rank comes). CTest expects the message and a run much shorter than the stall.
#include <chrono>
#include <cstdio>
#include <exception>
#include <span>
#include <thread>
#include <vector>

#include "runtime/comm/job.hpp"

int main() {
  using namespace burst::rt;
  try {
    Job job(CommOptions{5});
    Communicator& comm = job.comm();
    if (comm.rank() == comm.size() - 1) std::this_thread::sleep_for(std::chrono::seconds(60));
    std::vector<std::int64_t> ready{1};
    comm.allreduce(std::span<std::int64_t>(ready), ReduceOp::Sum);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unwound past the Job: %s\n", e.what());
    return 1;
  }
  return 0;
}
