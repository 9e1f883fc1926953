// nccl_ping_pongs (see runtime/calibration/gpu_speed.hpp): NCCL point-to-point round trips
// between the GPUs of a pair, timed with CUDA events on the first rank of the pair.
//
// One non-blocking communicator over the whole job (rank 0's unique id, nccl_bootstrap.hpp),
// made and destroyed here; a pair's two ranks exchange while the others wait at the job's
// barrier. A round trip is two groups, one per direction (a's ncclSend with b's ncclRecv, then
// the reverse), each issued and completed as nccl_wait.hpp polls it, and the host waits for
// the last event by polling too, so a peer that never comes ends in an error after the job's
// timeout, never in a hang. The first round trip of each size opens NCCL's lazy connection
// and is not counted (best_event_time's warm-up).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include "common/error.hpp"
#include "runtime/calibration/gpu_speed.hpp"
#include "runtime/comm/nccl_bootstrap.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/detail/cuda_stream.hpp"
#include "runtime/cuda/detail/device_buffer.hpp"
#include "runtime/cuda/detail/event_timer.hpp"
#include "runtime/cuda/detail/nccl_wait.hpp"

namespace burst::rt {
namespace {

using gpu::NcclClock;

// The job's communicator and the stream its transfers run on; aborted unless finished.
class PingPongComm {
 public:
  PingPongComm(Communicator& job, int device) : job_(job) {
    check_cuda_device(device);
    const NcclUniqueIdBytes id_bytes = shared_nccl_unique_id(job);
    ncclUniqueId id;
    std::memcpy(&id, id_bytes.data(), sizeof id);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    complete(ncclCommInitRankConfig(&comm_, job.size(), id, job.rank(), &config), "ncclCommInitRankConfig");
    stream_.emplace();
  }
  PingPongComm(const PingPongComm&) = delete;
  PingPongComm& operator=(const PingPongComm&) = delete;
  // The stream goes after this body (a member): after the abort, so its drain (cuda_stream.hpp)
  // ends, NCCL's kernels having exited; after finish() nothing of the communicator is left to run.
  ~PingPongComm() {
    if (comm_ != nullptr) (void)ncclCommAbort(comm_);
  }

  // Finalize (polled), then destroy: the orderly end once every exchange is done.
  void finish() {
    complete(ncclCommFinalize(comm_), "ncclCommFinalize");
    gpu::check_nccl(ncclCommDestroy(comm_), "ncclCommDestroy");
    comm_ = nullptr;
  }

  // Seconds of round trips of `bytes` between a and b (this rank is one of them): the best of
  // `repeat` after a warm-up.
  double round_trip(const LinkPair& p, void* buffer, std::size_t bytes, int repeat) {
    const bool first = job_.rank() == p.a;
    const int peer = first ? p.b : p.a;
    return gpu::best_event_time(
        repeat, stream_->handle(),
        [&] {
          for (const bool sending : {first, !first}) {
            gpu::check_nccl(ncclGroupStart(), "ncclGroupStart");
            const ncclResult_t posted = sending ? ncclSend(buffer, bytes, ncclUint8, peer, comm_, stream_->handle())
                                                : ncclRecv(buffer, bytes, ncclUint8, peer, comm_, stream_->handle());
            const ncclResult_t ended = ncclGroupEnd();
            complete(posted == ncclSuccess || posted == ncclInProgress ? ended : posted,
                     fmt::format("{} of {} bytes with rank {}", sending ? "ncclSend" : "ncclRecv", bytes, peer));
          }
        },
        [&](cudaEvent_t event) {
          const gpu::NcclPoll poll = gpu::wait_nccl_event(comm_, event, deadline());
          if (poll.state == gpu::NcclPoll::State::Done) return;
          (void)ncclCommAbort(comm_);
          comm_ = nullptr;
          throw Error(Problem{fmt::format("rank {}: NCCL ping-pong with rank {}", job_.rank(), peer),
                              poll.state == gpu::NcclPoll::State::Failed
                                  ? poll.failure
                                  : fmt::format("{} bytes did not arrive within {} s", bytes, job_.options().timeout_s),
                              "", "a rank stalled, or NCCL cannot connect (NCCL_DEBUG=INFO shows the transports)"});
        });
  }

 private:
  static void check_cuda_device(int device) {
    gpu::check_cuda(cudaSetDevice(device), fmt::format("cudaSetDevice({})", device));
  }
  [[nodiscard]] NcclClock::time_point deadline() const { return gpu::nccl_deadline(job_.options().timeout_s); }
  void complete(ncclResult_t status, std::string_view call) {
    gpu::complete_nccl_call(status, comm_, deadline(), job_.options().timeout_s,
                            fmt::format("rank {}: {} (calibration)", job_.rank(), call), [this] {
                              if (comm_ != nullptr) (void)ncclCommAbort(comm_);
                              comm_ = nullptr;
                            });
  }

  Communicator& job_;
  ncclComm_t comm_ = nullptr;
  std::optional<gpu::OwnedStream> stream_;  // made once the communicator is
};

}  // namespace

std::vector<LinkSpeed> nccl_ping_pongs(Communicator& comm, std::span<const LinkPair> pairs, const PingPongOptions& o,
                                       int device) {
  std::vector<LinkSpeed> speeds(pairs.size());
  if (pairs.empty()) return speeds;
  PingPongComm nccl(comm, device);
  std::size_t largest = 8;
  for (const std::size_t bytes : o.bandwidth_bytes) largest = std::max(largest, bytes);
  gpu::DeviceBuffer buffer{"NCCL ping-pong"};
  void* data = buffer.reserve(largest);
  // Defined bytes, set before any transfer: the memset may run on after it returns, and the
  // transfers' stream does not wait for the default stream.
  gpu::check_cuda(cudaMemset(data, 0, largest), "cudaMemset (NCCL ping-pong)");
  gpu::check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize (NCCL ping-pong)");
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const LinkPair& p = pairs[i];
    comm.barrier();
    if (comm.rank() != p.a && comm.rank() != p.b) continue;
    std::vector<double> small;
    for (int t = 0; t < o.latency_round_trips; ++t) small.push_back(nccl.round_trip(p, data, 8, 1));
    std::vector<std::pair<std::size_t, double>> fastest;
    for (const std::size_t bytes : o.bandwidth_bytes) {
      fastest.emplace_back(bytes, nccl.round_trip(p, data, bytes, o.bandwidth_round_trips));
    }
    speeds[i] = link_speed(std::move(small), fastest);
  }
  comm.barrier();
  nccl.finish();
  return speeds;
}

}  // namespace burst::rt
