// ZeRO's collectives on device memory over one NCCL communicator (see nccl_collectives.hpp).
#include "runtime/cuda/nccl_collectives.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include "common/error.hpp"
#include "runtime/comm/comm_errors.hpp"
#include "runtime/comm/nccl_bootstrap.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/detail/cuda_event.hpp"
#include "runtime/cuda/detail/cuda_stream.hpp"
#include "runtime/cuda/detail/nccl_wait.hpp"

namespace burst::rt::gpu {
namespace {

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::F32: return ncclFloat32;
    case DType::F64: return ncclFloat64;
    case DType::BF16: return ncclBfloat16;
    case DType::I32: return ncclInt32;
    case DType::I64: return ncclInt64;
    case DType::U64: return ncclUint64;
    case DType::Bytes: return ncclUint8;
  }
  return ncclUint8;
}

ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::Max ? ncclMax : ncclSum; }

// "allreduce of 4096 fp32", "barrier": the collective as NCCL call failures name it.
std::string payload(const Envelope& e) {
  if (e.operation == Operation::Barrier) return describe(e);
  return fmt::format("{} of {} {}", describe(e), e.count, to_string(e.dtype));
}

class NcclCollectives;

// A posted collective and the event recorded after it on the collective stream. Destroyed
// before the event fired (a timeout, a failure while posting): NCCL cannot withdraw it, so the
// communicator is aborted (~Posted's body), and the event goes after that, with the members.
struct Posted final : Request::State {
  explicit Posted(NcclCollectives& owner_) : owner(owner_), event("NCCL collective") {}
  Posted(const Posted&) = delete;
  Posted& operator=(const Posted&) = delete;
  ~Posted() override;

  NcclCollectives& owner;
  OwnedEvent event;
  bool done = false;
};

class NcclCollectives final : public Communicator {
  using Clock = NcclClock;

 public:
  NcclCollectives(Communicator& job, int device, cudaStream_t producer)
      : Communicator(job.options()), job_(job), producer_(producer) {
    try {
      init(device);
    } catch (...) {
      abort_nccl();
      release_cuda();
      throw;
    }
  }
  NcclCollectives(const NcclCollectives&) = delete;
  NcclCollectives& operator=(const NcclCollectives&) = delete;
  // Finalize waits until the communicator is quiet everywhere: bounded by the timeout, past
  // which it is aborted instead.
  ~NcclCollectives() override {
    if (!aborted_) {
      const ncclResult_t finalized = ncclCommFinalize(comm_);
      const bool started = finalized == ncclSuccess || finalized == ncclInProgress;
      if (!started || !nccl_settled(comm_, nccl_deadline(options().timeout_s))) {
        abort_nccl();
      } else {
        (void)ncclCommDestroy(comm_);
      }
    }
    release_cuda();
  }

  [[nodiscard]] int rank() const override { return job_.rank(); }
  [[nodiscard]] int size() const override { return job_.size(); }
  [[nodiscard]] int local_rank() const override { return job_.local_rank(); }
  [[nodiscard]] int local_size() const override { return job_.local_size(); }
  [[nodiscard]] bool reads_device_memory() const override { return true; }
  [[nodiscard]] bool reduces_bf16() const override { return true; }  // ncclBfloat16

  // The communicator stops for good; what is in flight is abandoned (the job is ending). NCCL
  // frees an aborted communicator, so it is forgotten here and never called again.
  void abort_nccl() const {
    if (aborted_.exchange(true)) return;
    if (comm_ != nullptr) (void)ncclCommAbort(comm_);
    comm_ = nullptr;
  }

 protected:
  std::unique_ptr<Request::State> post_send(ConstBuffer, const Envelope& e) override { refuse_point_to_point(e); }
  std::unique_ptr<Request::State> post_recv(MutBuffer, const Envelope& e) override { refuse_point_to_point(e); }

  std::unique_ptr<Request::State> post_barrier() override {
    const Envelope e{Operation::Barrier, -1, Channel::Collective, 0, RingLevel::Flat, 0, DType::Bytes};
    return issue(e, "ncclAllReduce",
                 [this] { return ncclAllReduce(barrier_, barrier_, 1, ncclInt32, ncclSum, comm_, stream()); });
  }
  std::unique_ptr<Request::State> post_allreduce(MutBuffer data, const Envelope& e) override {
    require_device(e, data.data, "buffer");
    return issue(e, "ncclAllReduce", [&] {
      return ncclAllReduce(data.data, data.data, data.count, nccl_type(e.dtype), nccl_op(e.op), comm_, stream());
    });
  }
  std::unique_ptr<Request::State> post_allgather(ConstBuffer mine, MutBuffer all, const Envelope& e) override {
    require_device(e, mine.data, "input");
    require_device(e, all.data, "output");
    return issue(e, "ncclAllGather",
                 [&] { return ncclAllGather(mine.data, all.data, mine.count, nccl_type(e.dtype), comm_, stream()); });
  }
  std::unique_ptr<Request::State> post_reduce_scatter(ConstBuffer all, MutBuffer mine, const Envelope& e) override {
    require_device(e, all.data, "input");
    require_device(e, mine.data, "output");
    return issue(e, "ncclReduceScatter", [&] {
      return ncclReduceScatter(all.data, mine.data, mine.count, nccl_type(e.dtype), nccl_op(e.op), comm_, stream());
    });
  }
  std::unique_ptr<Request::State> post_gather(ConstBuffer mine, MutBuffer all, const Envelope& e) override {
    require_device(e, mine.data, "input");
    if (rank() == 0) require_device(e, all.data, "output");
    return issue(e, "ncclSend / ncclRecv group", [&] { return gather_group(mine, all); });
  }
  std::unique_ptr<Request::State> post_broadcast(MutBuffer data, int root, const Envelope& e) override {
    require_device(e, data.data, "buffer");
    return issue(e, "ncclBroadcast", [&] {
      return ncclBroadcast(data.data, data.data, data.count, nccl_type(e.dtype), root, comm_, stream());
    });
  }

  bool test(Request::State& state, const Envelope& e) override {
    require_live(e);
    auto& posted = static_cast<Posted&>(state);
    const NcclPoll poll = poll_nccl_event(comm_, posted.event.handle());
    if (poll.state == NcclPoll::State::Pending) return false;
    if (poll.state == NcclPoll::State::Failed) {
      abort_nccl();
      throw backend_error(rank(), e, poll.failure);
    }
    posted.done = true;
    return true;
  }

  void abort_backend(int exit_code) const override {
    abort_nccl();
    job_.abort_all(exit_code);
  }

 private:
  // A call on the non-blocking communicator, waited for against the timeout; on failure the
  // communicator is aborted and the rank says which call, for which collective, went wrong.
  void complete(ncclResult_t status, std::string_view call, std::string_view what) const {
    complete_nccl_call(status, comm_, nccl_deadline(options().timeout_s), options().timeout_s,
                       fmt::format("rank {}: {} ({})", rank(), call, what), [this] { abort_nccl(); });
  }

  void require_live(const Envelope& e) const {
    if (aborted_) throw backend_error(rank(), e, "the NCCL communicator was aborted after an earlier failure");
  }

  // Nothing is issued for host memory: NCCL would fault on it, or read garbage.
  void require_device(const Envelope& e, const void* data, std::string_view role) const {
    if (e.bytes() == 0 || is_device_memory(data)) return;
    throw Error(Problem{
        fmt::format("rank {}", rank()),
        fmt::format("NCCL collectives: {} got host memory; its {} must be device memory", describe(e), role),
        "cudaMalloc'd or managed memory", "host values (verdicts, reports) go over the job's own communicator"});
  }

  [[noreturn]] void refuse_point_to_point(const Envelope& e) const {
    throw Error(Problem{fmt::format("rank {}: {}", rank(), describe(e)),
                        "NCCL collectives: point-to-point transfers go over the ring's communicator", "",
                        "isend, irecv and all_to_all belong to the ring's transport (make_nccl_communicator)"});
  }

  void init(int device) {
    // Kernels of this communicator and the ring's in the host's issue order (see the header).
    ::setenv("NCCL_LAUNCH_ORDER_IMPLICIT", "1", 0);
    check_cuda(cudaSetDevice(device), fmt::format("cudaSetDevice({})", device));
    stream_.emplace();
    produced_.emplace("the producer's stream, before a collective");
    check_cuda(cudaMalloc(&barrier_, sizeof(std::int32_t)), "cudaMalloc(NCCL barrier, 4 bytes)");
    check_cuda(cudaMemsetAsync(barrier_, 0, sizeof(std::int32_t), stream()), "cudaMemsetAsync(NCCL barrier)");
    const NcclUniqueIdBytes id_bytes = shared_nccl_unique_id(job_);
    ncclUniqueId id;
    std::memcpy(&id, id_bytes.data(), sizeof id);
    // Non-blocking: initialisation, collectives and finalisation return at once and are polled
    // against the timeout, so no call waits for ever on a rank that never comes.
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    complete(ncclCommInitRankConfig(&comm_, job_.size(), id, job_.rank(), &config), "ncclCommInitRankConfig",
             "NCCL collectives");
  }

  // The collective `enqueue` issues on stream_, after what `producer` holds now, then the
  // event that says it is done. Any failure from here aborts the communicator (~Posted).
  std::unique_ptr<Request::State> issue(const Envelope& e, std::string_view call,
                                        const std::function<ncclResult_t()>& enqueue) {
    require_live(e);
    auto posted = std::make_unique<Posted>(*this);
    check_cuda(cudaEventRecord(produced_->handle(), producer_),
               "cudaEventRecord(the producer's stream, before a collective)");
    check_cuda(cudaStreamWaitEvent(stream(), produced_->handle(), 0),
               "cudaStreamWaitEvent(a collective on the producer)");
    complete(enqueue(), call, payload(e));
    check_cuda(cudaEventRecord(posted->event.handle(), stream()), "cudaEventRecord(NCCL collective)");
    return posted;
  }

  // Rank 0 copies its own block and receives every other rank's; the others send theirs. The
  // first call NCCL refuses is returned (the group still ends: what was added may launch).
  ncclResult_t gather_group(ConstBuffer mine, MutBuffer all) const {
    const ncclDataType_t type = nccl_type(mine.dtype);
    if (rank() == 0) {
      check_cuda(cudaMemcpyAsync(all.data, mine.data, mine.bytes(), cudaMemcpyDeviceToDevice, stream()),
                 "cudaMemcpyAsync(gather_to_root, rank 0's own block)");
    }
    if (const ncclResult_t started = ncclGroupStart(); started != ncclSuccess) return started;
    ncclResult_t refused = ncclSuccess;
    if (rank() != 0) {
      refused = ncclSend(mine.data, mine.count, type, 0, comm_, stream());
    } else {
      for (int peer = 1; peer < size() && (refused == ncclSuccess || refused == ncclInProgress); ++peer) {
        auto* block = static_cast<std::byte*>(all.data) + static_cast<std::size_t>(peer) * mine.bytes();
        refused = ncclRecv(block, mine.count, type, peer, comm_, stream());
      }
    }
    const ncclResult_t ended = ncclGroupEnd();
    return refused == ncclSuccess || refused == ncclInProgress ? ended : refused;
  }

  // The CUDA objects; the communicator is finalized or aborted first, so the stream's drain
  // (cuda_stream.hpp) ends: a finalized communicator has settled, an aborted one's kernels exit.
  void release_cuda() {
    if (barrier_ != nullptr) (void)cudaFree(barrier_);
    barrier_ = nullptr;
    produced_.reset();
    stream_.reset();
  }

  [[nodiscard]] cudaStream_t stream() const { return stream_->handle(); }

  Communicator& job_;
  cudaStream_t producer_;               // where the buffers' writers are queued
  std::optional<OwnedStream> stream_;   // the collectives' (made in init, on the device)
  std::optional<OwnedEvent> produced_;  // recorded on producer_ before each collective
  void* barrier_ = nullptr;             // one int32 on the device, zero, for barrier
  // One host thread issues every NCCL call of this rank; aborted_ is atomic because
  // abort_backend may come from a watchdog.
  mutable ncclComm_t comm_ = nullptr;
  mutable std::atomic<bool> aborted_ = false;
};

Posted::~Posted() {  // the event goes after this, with the members
  if (!done) owner.abort_nccl();
}

}  // namespace

std::unique_ptr<Communicator> make_nccl_collectives(Communicator& job, int device, void* producer) {
  return std::make_unique<NcclCollectives>(job, device, static_cast<cudaStream_t>(producer));
}

}  // namespace burst::rt::gpu
