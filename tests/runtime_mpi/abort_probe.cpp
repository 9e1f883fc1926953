// abort_job ends every rank: the last rank aborts while the others wait (30 s) for a message
// it will never send. CTest expects the abort message and a run much shorter than the wait.
#include <vector>

#include "runtime/comm/mpi_communicator.hpp"

int main() {
  using namespace burst::rt;
  const MpiSession session;
  auto comm = make_mpi_communicator({30});
  const int last = comm->size() - 1;
  if (comm->rank() == last) abort_job(*comm, "deliberate failure to test abort_job");
  std::vector<float> block(4);
  Request never = comm->irecv(block, last, Channel::KvRing, 0, RingLevel::Flat);
  comm->wait(never);
  return 0;
}
