// Waiting on non-blocking NCCL communicators without ever waiting for ever.
//
// A communicator made with config.blocking = 0 returns from every call at once (init, split,
// group end, finalize: ncclInProgress) and finishes in the background; ncclCommGetAsyncError
// says when it is done or failed. The work it enqueues on a stream ends when an event recorded
// after it fires. Both are polled here against a deadline (the job's timeout), so a rank whose
// peer never comes reports it instead of hanging: the NCCL communicator of the ring
// (nccl_communicator.cpp) and the calibration's ping-pong (nccl_ping_pong.cpp) both wait so.
// What to do on failure (abort every communicator, then report) is the caller's.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include <cuda_runtime_api.h>
#include <nccl.h>

namespace burst::rt::gpu {

using NcclClock = std::chrono::steady_clock;

// Throws burst::Error naming `call` when `status` is not ncclSuccess.
void check_nccl(ncclResult_t status, std::string_view call);

// `timeout_s` from now: the deadline of a call on a non-blocking communicator.
[[nodiscard]] NcclClock::time_point nccl_deadline(double timeout_s);

// Polls `comm` until its last call has completed: true when it has, false on an error or past
// the deadline.
[[nodiscard]] bool nccl_settled(ncclComm_t comm, NcclClock::time_point deadline);

// A call on a non-blocking communicator (its returned `status`): returns once it completed.
// Otherwise calls `abort` and throws burst::Error at `who` ("rank 3: ncclGroupEnd on the kv
// ring (step 2)") saying what NCCL reported or that it did not complete within `timeout_s`.
void complete_nccl_call(ncclResult_t status, ncclComm_t comm, NcclClock::time_point deadline, double timeout_s,
                        std::string_view who, const std::function<void()>& abort);

// What polling an event recorded after a communicator's work found.
struct NcclPoll {
  enum class State { Done, Pending, Failed } state = State::Pending;
  std::string failure;  // Failed: "NCCL: <message>" or "CUDA: <message>"
};
// One look: the communicator's asynchronous error first, then the event.
[[nodiscard]] NcclPoll poll_nccl_event(ncclComm_t comm, cudaEvent_t event);
// Looks until the event fired or failed, or the deadline passed (then Pending).
[[nodiscard]] NcclPoll wait_nccl_event(ncclComm_t comm, cudaEvent_t event, NcclClock::time_point deadline);

}  // namespace burst::rt::gpu
