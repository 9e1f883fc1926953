#include "runtime/cuda/detail/nccl_wait.hpp"

#include <thread>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/wait_time.hpp"

namespace burst::rt::gpu {

void check_nccl(ncclResult_t status, std::string_view call) {
  if (status == ncclSuccess) return;
  throw Error(Problem{std::string(call), ncclGetErrorString(status), "",
                      "NCCL_DEBUG=WARN says more; check that every rank runs the same plan"});
}

NcclClock::time_point nccl_deadline(double timeout_s) { return NcclClock::now() + wait_duration(timeout_s); }

bool nccl_settled(ncclComm_t comm, NcclClock::time_point deadline) {
  for (;;) {
    ncclResult_t state = ncclSuccess;
    if (ncclCommGetAsyncError(comm, &state) != ncclSuccess) return false;
    if (state == ncclSuccess) return true;
    if (state != ncclInProgress || NcclClock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

void complete_nccl_call(ncclResult_t status, ncclComm_t comm, NcclClock::time_point deadline, double timeout_s,
                        std::string_view who, const std::function<void()>& abort) {
  if (status == ncclSuccess || status == ncclInProgress) {
    if (nccl_settled(comm, deadline)) return;
    ncclResult_t state = ncclSuccess;
    (void)ncclCommGetAsyncError(comm, &state);
    abort();
    throw Error(Problem{std::string(who),
                        state == ncclInProgress ? fmt::format("did not complete within {} s", timeout_s)
                                                : std::string(ncclGetErrorString(state)),
                        "", "a rank did not start or stalled, or NCCL cannot connect (NCCL_DEBUG=INFO says more)"});
  }
  abort();
  throw Error(Problem{std::string(who), ncclGetErrorString(status), "",
                      "NCCL_DEBUG=WARN says more; check that every rank runs the same plan"});
}

NcclPoll poll_nccl_event(ncclComm_t comm, cudaEvent_t event) {
  ncclResult_t async = ncclSuccess;
  if (const ncclResult_t r = ncclCommGetAsyncError(comm, &async); r != ncclSuccess) async = r;
  if (async != ncclSuccess && async != ncclInProgress) {
    return {NcclPoll::State::Failed, fmt::format("NCCL: {}", ncclGetErrorString(async))};
  }
  const cudaError_t query = cudaEventQuery(event);
  if (query == cudaErrorNotReady) return {NcclPoll::State::Pending, ""};
  if (query != cudaSuccess) return {NcclPoll::State::Failed, fmt::format("CUDA: {}", cudaGetErrorString(query))};
  return {NcclPoll::State::Done, ""};
}

NcclPoll wait_nccl_event(ncclComm_t comm, cudaEvent_t event, NcclClock::time_point deadline) {
  for (;;) {
    NcclPoll p = poll_nccl_event(comm, event);
    if (p.state != NcclPoll::State::Pending || NcclClock::now() > deadline) return p;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

}  // namespace burst::rt::gpu
