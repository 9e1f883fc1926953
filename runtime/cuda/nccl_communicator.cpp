// NCCL groups from the executor's transfers (see nccl_communicator.hpp).
#include "runtime/cuda/nccl_communicator.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nccl.h>

#include "common/error.hpp"
#include "runtime/comm/comm_errors.hpp"
#include "runtime/comm/nccl_bootstrap.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/detail/cuda_event.hpp"
#include "runtime/cuda/detail/cuda_stream.hpp"
#include "runtime/cuda/detail/nccl_wait.hpp"
#include "runtime/schedule/nccl_group_assembler.hpp"

namespace burst::rt::gpu {
namespace {

// Device memory of transfers in flight, reused by size (a ring's blocks are a few sizes).
class StagingPool {
 public:
  StagingPool() = default;
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;
  ~StagingPool() {
    for (const auto& [bytes, data] : free_) (void)cudaFree(data);
  }
  void* take(std::size_t bytes) {
    if (const auto it = free_.find(bytes); it != free_.end()) {
      void* data = it->second;
      free_.erase(it);
      return data;
    }
    void* data = nullptr;
    check_cuda(cudaMalloc(&data, std::max<std::size_t>(bytes, 1)),
               fmt::format("cudaMalloc(NCCL staging, {} bytes)", bytes));
    return data;
  }
  void give(std::size_t bytes, void* data) { free_.emplace(bytes, data); }

 private:
  std::multimap<std::size_t, void*> free_;
};

// One NCCL communicator of the plan (a ring at a level) and the stream its groups run on. The
// stream is reset by NcclCommunicator only after the communicator was destroyed or aborted, so its
// drain (cuda_stream.hpp) ends.
struct Lane {
  ncclComm_t comm = nullptr;
  std::optional<OwnedStream> owned;  // made with the communicator (init)
  [[nodiscard]] cudaStream_t stream() const { return owned->handle(); }
};

// One group of the current pass: the device buffer of each op, and once issued its event.
struct GroupRecord {
  explicit GroupRecord(std::size_t ops) : buffers(ops, nullptr) {}
  GroupRecord(const GroupRecord&) = delete;
  GroupRecord& operator=(const GroupRecord&) = delete;
  std::vector<void*> buffers;
  std::optional<OwnedEvent> event;  // recorded after the group: set once it is issued
  int lane = 0;
};

class NcclCommunicator;

// A posted transfer. Destroyed before it completed (a timeout): NCCL cannot withdraw it, so
// the communicators are aborted and its staging is left to them. `staging` is null where the
// caller's buffer is device memory, which NCCL reads or writes in place.
struct Transfer final : Request::State {
  Transfer(NcclCommunicator& owner_, std::shared_ptr<GroupRecord> group_, std::size_t group_index_, void* staging_,
           std::size_t bytes_, void* host_destination_)
      : owner(owner_),
        group(std::move(group_)),
        group_index(group_index_),
        staging(staging_),
        bytes(bytes_),
        host_destination(host_destination_) {}
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;
  ~Transfer() override;

  NcclCommunicator& owner;
  std::shared_ptr<GroupRecord> group;
  std::size_t group_index;
  void* staging;
  std::size_t bytes;
  void* host_destination;  // a receive's host buffer; nullptr for a send
  bool done = false;
};

class NcclCommunicator final : public Communicator {
  using Clock = NcclClock;

 public:
  NcclCommunicator(Communicator& job, const NcclOpLists& lists, int device, cudaStream_t producer)
      : Communicator(job.options()),
        job_(job),
        producer_(producer),
        assembler_(job.rank(), lists.of(job.rank(), NcclPhase::Forward), lists.of(job.rank(), NcclPhase::Backward)) {
    // Anything that fails half-way aborts what NCCL already holds before the members go (a
    // cudaFree in ~StagingPool would otherwise wait on kernels nobody stops).
    try {
      init(lists, device);
    } catch (...) {
      abort_nccl();
      produced_.reset();
      for (Lane& lane : lanes_) lane.owned.reset();  // after the abort: their drains end
      throw;
    }
  }
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;
  // Finalize waits until the communicator is quiet everywhere: bounded by the timeout, past
  // which the communicators are aborted instead.
  ~NcclCommunicator() override {
    const auto deadline = nccl_deadline(options().timeout_s);
    for (Lane& lane : lanes_) {
      if (lane.comm == nullptr || aborted_) continue;
      const ncclResult_t finalized = ncclCommFinalize(lane.comm);
      if ((finalized != ncclSuccess && finalized != ncclInProgress) || !nccl_settled(lane.comm, deadline)) {
        abort_nccl();
        break;
      }
    }
    for (Lane& lane : lanes_) {
      if (lane.comm != nullptr && !aborted_) (void)ncclCommDestroy(lane.comm);
      lane.owned.reset();  // finalized and settled, or aborted: its drain ends
    }
    produced_.reset();
  }

  [[nodiscard]] int rank() const override { return job_.rank(); }
  [[nodiscard]] int size() const override { return job_.size(); }
  [[nodiscard]] int local_rank() const override { return job_.local_rank(); }
  [[nodiscard]] int local_size() const override { return job_.local_size(); }

  void begin_pass(AttentionPass pass) override {
    assembler_.begin(pass);
    records_.clear();
  }

  // Every communicator stops; what is in flight is abandoned (the job is ending). Aborted
  // communicators are freed by NCCL, so they are forgotten here and never called again.
  void abort_nccl() const {
    if (aborted_.exchange(true)) return;
    if (world_ != nullptr) (void)ncclCommAbort(world_);
    world_ = nullptr;
    for (Lane& lane : lanes_) {
      if (lane.comm != nullptr) (void)ncclCommAbort(lane.comm);
      lane.comm = nullptr;
    }
  }

 protected:
  std::unique_ptr<Request::State> post_send(ConstBuffer data, const Envelope& e) override {
    return post(e, const_cast<void*>(data.data),
                nullptr);  // NOLINT(cppcoreguidelines-pro-type-const-cast): only read (by NCCL or the staging copy)
  }
  std::unique_ptr<Request::State> post_recv(MutBuffer data, const Envelope& e) override {
    return post(e, nullptr, data.data);
  }

  // Small host values: the job's own communicator carries them, complete on return.
  std::unique_ptr<Request::State> post_barrier() override {
    job_.barrier();
    return nullptr;
  }
  std::unique_ptr<Request::State> post_allreduce(MutBuffer data, const Envelope& e) override {
    job_.allreduce(data, e.op);
    return nullptr;
  }
  std::unique_ptr<Request::State> post_allgather(ConstBuffer mine, MutBuffer all, const Envelope&) override {
    job_.allgather(mine, all);
    return nullptr;
  }
  std::unique_ptr<Request::State> post_reduce_scatter(ConstBuffer all, MutBuffer mine, const Envelope& e) override {
    job_.reduce_scatter(all, mine, e.op);
    return nullptr;
  }
  std::unique_ptr<Request::State> post_gather(ConstBuffer mine, MutBuffer all, const Envelope&) override {
    job_.gather_to_root(mine, all);
    return nullptr;
  }
  std::unique_ptr<Request::State> post_broadcast(MutBuffer data, int root, const Envelope&) override {
    job_.broadcast(data, root);
    return nullptr;
  }

  bool test(Request::State& state, const Envelope& e) override {
    require_live(e);
    auto& t = static_cast<Transfer&>(state);
    if (!t.group->event) {  // the executor waits on a group it never completed: NCCL would hang
      throw backend_error(rank(), e,
                          fmt::format("its NCCL group was never issued: {}", assembler_.incomplete(t.group_index)));
    }
    const Lane& lane = lanes_[static_cast<std::size_t>(t.group->lane)];
    const NcclPoll poll = poll_nccl_event(lane.comm, t.group->event->handle());
    if (poll.state == NcclPoll::State::Pending) return false;
    if (poll.state == NcclPoll::State::Failed) {
      abort_nccl();
      throw backend_error(rank(), e, poll.failure);
    }
    if (t.staging == nullptr) {  // device memory: nothing to copy or give back
      t.done = true;
      return true;
    }
    if (t.host_destination != nullptr) {
      if (const cudaError_t copy = cudaMemcpy(t.host_destination, t.staging, t.bytes, cudaMemcpyDeviceToHost);
          copy != cudaSuccess) {
        abort_nccl();
        throw backend_error(rank(), e,
                            fmt::format("copying the received block to the host: {}", cudaGetErrorString(copy)));
      }
    }
    pool_.give(t.bytes, t.staging);
    t.done = true;
    return true;
  }

  void abort_backend(int exit_code) const override {
    abort_nccl();
    job_.abort_all(exit_code);
  }

 private:
  // A call on a non-blocking communicator, waited for against the deadline (nccl_wait.hpp);
  // on failure every communicator is aborted and the rank says which call, on which
  // communicator, went wrong.
  void complete(ncclResult_t status, ncclComm_t comm, Clock::time_point deadline, std::string_view call,
                std::string_view where) const {
    complete_nccl_call(status, comm, deadline, options().timeout_s,
                       fmt::format("rank {}: {} on the {}", rank(), call, where), [this] { abort_nccl(); });
  }

  void require_live(const Envelope& e) const {
    if (aborted_) throw backend_error(rank(), e, "the NCCL communicators were aborted after an earlier failure");
  }

  void init(const NcclOpLists& lists, int device) {
    // The rings keep several communicators in flight on one device; NCCL orders their kernels
    // as the host issues them only with implicit launch order (NCCL >= 2.26), which the op
    // lists' deadlock check assumes (nccl_op_list.hpp). A user's own setting is kept.
    ::setenv("NCCL_LAUNCH_ORDER_IMPLICIT", "1", 0);
    int version = 0;
    check_nccl(ncclGetVersion(&version), "ncclGetVersion");
    if (version < 22600) {
      throw Error(Problem{"--transport nccl", fmt::format("NCCL {} is loaded", version), "NCCL 2.26 or later",
                          "overlapping rings need NCCL_LAUNCH_ORDER_IMPLICIT; install a newer NCCL"});
    }
    check_cuda(cudaSetDevice(device), fmt::format("cudaSetDevice({})", device));
    // On this device, before the warm-up issues the first group.
    produced_.emplace("the kernels' stream, before a group");
    const NcclUniqueIdBytes id_bytes = shared_nccl_unique_id(job_);
    ncclUniqueId id;
    std::memcpy(&id, id_bytes.data(), sizeof id);
    // Non-blocking communicators: initialisation, splits, group launches and finalisation all
    // return at once and are polled against the deadline, so no NCCL call waits for ever on a
    // rank that never comes.
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    const auto deadline = nccl_deadline(options().timeout_s);
    complete(ncclCommInitRankConfig(&world_, job_.size(), id, job_.rank(), &config), world_, deadline,
             "ncclCommInitRankConfig", "job");
    // Every rank splits the communicators any rank uses, in index order.
    std::map<int, NcclComm> used;
    for (const NcclPhase phase : {NcclPhase::WarmUp, NcclPhase::Forward, NcclPhase::Backward}) {
      for (const NcclOpList& list : lists.all(phase)) {
        for (const NcclGroup& g : list) used.emplace(comm_index(g.comm), g.comm);
      }
    }
    for (const auto& [index, comm] : used) {
      Lane& lane = lanes_[static_cast<std::size_t>(index)];
      const ncclResult_t split = ncclCommSplit(world_, 0, job_.rank(), &lane.comm, &config);
      complete(split, lane.comm != nullptr ? lane.comm : world_, deadline, "ncclCommSplit", to_string(comm));
      lane.owned.emplace();
    }
    complete(ncclCommFinalize(world_), world_, deadline, "ncclCommFinalize", "job");
    check_nccl(ncclCommDestroy(world_), "ncclCommDestroy(world)");
    world_ = nullptr;
    warm_up(lists.of(job_.rank(), NcclPhase::WarmUp));
  }

  // `source`: a send's buffer; `destination`: a receive's (the other is null).
  std::unique_ptr<Request::State> post(const Envelope& e, void* source, void* destination) {
    require_live(e);
    const NcclGroupAssembler::Slot slot = assembler_.post(e);
    // From here the assembler counts the op as posted: a failure must stop NCCL, or a later
    // group could go out with this op's buffer missing.
    try {
      const NcclGroup& group = assembler_.group(slot.group);
      if (records_.size() <= slot.group) records_.resize(slot.group + 1);
      auto& record = records_[slot.group];
      if (!record) record = std::make_shared<GroupRecord>(group.ops.size());
      record->lane = comm_index(group.comm);
      const std::size_t bytes = e.bytes();
      // The ring executor's blocks are device memory (DeviceKernelMemory) and go in place; host
      // buffers (the Ulysses all-to-all's) through a staging buffer of the pool.
      void* caller = source != nullptr ? source : destination;
      std::unique_ptr<Transfer> transfer;
      if (bytes > 0 && is_device_memory(caller)) {
        record->buffers[slot.op] = caller;
        transfer = std::make_unique<Transfer>(*this, record, slot.group, nullptr, bytes, nullptr);
      } else {
        void* staging = pool_.take(bytes);
        if (source != nullptr) {
          check_cuda(cudaMemcpyAsync(staging, source, bytes, cudaMemcpyHostToDevice,
                                     lanes_[static_cast<std::size_t>(record->lane)].stream()),
                     "cudaMemcpyAsync(NCCL send)");
        }
        record->buffers[slot.op] = staging;
        transfer = std::make_unique<Transfer>(*this, record, slot.group, staging, bytes, destination);
      }
      for (const std::size_t ready : assembler_.take_ready()) issue(assembler_.group(ready), *records_[ready]);
      return transfer;
    } catch (...) {
      abort_nccl();
      throw;
    }
  }

  // The whole group in one ncclGroupStart / ncclGroupEnd on its communicator's stream, bytes as
  // bytes (a point-to-point transfer does not read its type, and NCCL does not check that the
  // two sides agree on one), then an event that says when it is done. The group's stream first
  // waits for everything queued on the producer's stream so far: the kernels and element
  // operations that wrote its send buffers (and the pool allocations of its receive buffers).
  void issue(const NcclGroup& group, GroupRecord& record) {
    const Lane& lane = lanes_[static_cast<std::size_t>(comm_index(group.comm))];
    const std::string where = fmt::format("{} (step {})", to_string(group.comm), group.step);
    if (producer_ != nullptr) {
      check_cuda(cudaEventRecord(produced_->handle(), producer_),
                 "cudaEventRecord(the kernels' stream, before a group)");
      check_cuda(cudaStreamWaitEvent(lane.stream(), produced_->handle(), 0),
                 "cudaStreamWaitEvent(a group on the kernels)");
    }
    // Made before the group starts, so a refused event leaves no group in flight without one. An
    // event never recorded would read as complete: on a failure below it is dropped, never stored.
    std::optional<OwnedEvent> event(std::in_place, "NCCL group");
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (std::size_t o = 0; o < group.ops.size(); ++o) {
      const NcclOp& op = group.ops[o];
      const bool send = op.direction == NcclDirection::Send;
      const ncclResult_t status =
          send ? ncclSend(record.buffers[o], op.bytes, ncclUint8, op.peer, lane.comm, lane.stream())
               : ncclRecv(record.buffers[o], op.bytes, ncclUint8, op.peer, lane.comm, lane.stream());
      if (status != ncclSuccess && status != ncclInProgress) {
        (void)ncclGroupEnd();  // what was added may launch: only an abort stops it
        event.reset();
        complete(status, lane.comm, nccl_deadline(options().timeout_s),
                 fmt::format("{} ({} rank {})", send ? "ncclSend" : "ncclRecv", describe_payload(op), op.peer), where);
      }
    }
    const ncclResult_t ended = ncclGroupEnd();
    if (ended != ncclSuccess && ended != ncclInProgress) event.reset();
    complete(ended, lane.comm, nccl_deadline(options().timeout_s), "ncclGroupEnd", where);
    if (const cudaError_t recorded = cudaEventRecord(event->handle(), lane.stream()); recorded != cudaSuccess) {
      event.reset();  // never recorded: it would read as complete
      abort_nccl();
      check_cuda(recorded, "cudaEventRecord(NCCL group)");
    }
    record.event = std::move(event);
  }

  // One element each way with every peer of every communicator, then wait for all of it, so
  // NCCL's connections exist before the first timed transfer.
  void warm_up(const NcclOpList& groups) {
    std::vector<std::unique_ptr<GroupRecord>> records;
    for (const NcclGroup& group : groups) {
      auto& record = records.emplace_back(std::make_unique<GroupRecord>(group.ops.size()));
      const Lane& lane = lanes_[static_cast<std::size_t>(comm_index(group.comm))];
      for (std::size_t o = 0; o < group.ops.size(); ++o) {
        record->buffers[o] = pool_.take(group.ops[o].bytes);
        check_cuda(cudaMemsetAsync(record->buffers[o], 0, group.ops[o].bytes, lane.stream()),
                   "cudaMemsetAsync(NCCL warm-up)");
      }
      issue(group, *record);
    }
    const auto deadline = nccl_deadline(options().timeout_s);
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const Lane& lane = lanes_[static_cast<std::size_t>(comm_index(groups[g].comm))];
      const NcclPoll poll = wait_nccl_event(lane.comm, records[g]->event->handle(), deadline);
      if (poll.state != NcclPoll::State::Done) {
        std::vector<int> peers;
        for (const NcclOp& op : groups[g].ops) peers.push_back(op.peer);
        abort_nccl();
        throw Error(Problem{fmt::format("rank {}: NCCL warm-up on the {}", rank(), to_string(groups[g].comm)),
                            poll.state == NcclPoll::State::Failed
                                ? fmt::format("the exchange with rank(s) {}: {}", fmt::join(peers, ", "), poll.failure)
                                : fmt::format("the exchange with rank(s) {} did not complete within {} s",
                                              fmt::join(peers, ", "), options().timeout_s),
                            "", "a rank did not start, or NCCL cannot connect (NCCL_DEBUG=INFO shows the transports)"});
      }
      for (std::size_t o = 0; o < groups[g].ops.size(); ++o) pool_.give(groups[g].ops[o].bytes, records[g]->buffers[o]);
    }
  }

  Communicator& job_;
  cudaStream_t producer_;               // where the blocks' writers are queued (may be null)
  std::optional<OwnedEvent> produced_;  // recorded on producer_ before each group (made in init)
  NcclGroupAssembler assembler_;
  // One host thread per device issues every NCCL call of this rank (NCCL makes racing launch
  // threads fatal); aborted_ is atomic because abort_backend may come from a watchdog.
  mutable ncclComm_t world_ = nullptr;  // only during construction
  mutable std::array<Lane, kNcclCommCount> lanes_{};
  std::vector<std::shared_ptr<GroupRecord>> records_;  // [group] of the current pass
  StagingPool pool_;
  mutable std::atomic<bool> aborted_ = false;
};

Transfer::~Transfer() {
  if (!done) owner.abort_nccl();
}

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(Communicator& job, const NcclOpLists& lists, int device,
                                                     void* producer) {
  return std::make_unique<NcclCommunicator>(job, lists, device, static_cast<cudaStream_t>(producer));
}

}  // namespace burst::rt::gpu
