// NCCL groups from the executor's transfers (see nccl_communicator.hpp).
#include "runtime/cuda/nccl_communicator.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <string_view>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include "common/error.hpp"
#include "runtime/comm/comm_errors.hpp"
#include "runtime/comm/nccl_bootstrap.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/schedule/nccl_group_assembler.hpp"

namespace burst::rt::gpu {
namespace {

void check_nccl(ncclResult_t status, std::string_view call) {
  if (status == ncclSuccess) return;
  throw Error(Problem{std::string(call), ncclGetErrorString(status), "",
                      "NCCL_DEBUG=WARN says more; check that every rank runs the same plan"});
}

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::BF16: return ncclBfloat16;
    case DType::F32: return ncclFloat32;
    case DType::F64: return ncclFloat64;
    case DType::I32: return ncclInt32;
    case DType::I64: return ncclInt64;
    case DType::U64: return ncclUint64;
    case DType::Bytes: break;
  }
  return ncclUint8;
}

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
    check_cuda(cudaMalloc(&data, std::max<std::size_t>(bytes, 1)), fmt::format("cudaMalloc(NCCL staging, {} bytes)", bytes));
    return data;
  }
  void give(std::size_t bytes, void* data) { free_.emplace(bytes, data); }

 private:
  std::multimap<std::size_t, void*> free_;
};

// One NCCL communicator of the plan (a ring at a level) and the stream its groups run on.
struct Lane {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

// One group of the current pass: the device buffer of each op, and once issued its event.
struct GroupRecord {
  explicit GroupRecord(std::size_t ops) : buffers(ops, nullptr) {}
  GroupRecord(const GroupRecord&) = delete;
  GroupRecord& operator=(const GroupRecord&) = delete;
  ~GroupRecord() {
    if (event != nullptr) (void)cudaEventDestroy(event);
  }
  std::vector<void*> buffers;
  cudaEvent_t event = nullptr;  // recorded after the group: set once it is issued
  int lane = 0;
};

class NcclCommunicator;

// A posted transfer. Destroyed before it completed (a timeout): NCCL cannot withdraw it, so
// the communicators are aborted and its staging is left to them.
struct Transfer final : Request::State {
  Transfer(NcclCommunicator& owner_, std::shared_ptr<GroupRecord> group_, std::size_t group_index_, void* staging_,
           std::size_t bytes_, void* host_destination_)
      : owner(owner_), group(std::move(group_)), group_index(group_index_), staging(staging_), bytes(bytes_),
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
 public:
  NcclCommunicator(Communicator& job, const NcclOpLists& lists, int device)
      : Communicator(job.options()), job_(job),
        assembler_(job.rank(), lists.of(job.rank(), NcclPhase::Forward), lists.of(job.rank(), NcclPhase::Backward)) {
    check_cuda(cudaSetDevice(device), fmt::format("cudaSetDevice({})", device));
    const NcclUniqueIdBytes id_bytes = shared_nccl_unique_id(job_);
    ncclUniqueId id;
    std::memcpy(&id, id_bytes.data(), sizeof id);
    ncclComm_t world = nullptr;
    check_nccl(ncclCommInitRank(&world, job_.size(), id, job_.rank()), "ncclCommInitRank");
    // Every rank splits the communicators any rank uses, in index order.
    std::set<int> used;
    for (const NcclPhase phase : {NcclPhase::WarmUp, NcclPhase::Forward, NcclPhase::Backward}) {
      for (const NcclOpList& list : lists.all(phase)) {
        for (const NcclGroup& g : list) used.insert(comm_index(g.comm));
      }
    }
    for (const int index : used) {
      Lane& lane = lanes_[static_cast<std::size_t>(index)];
      check_nccl(ncclCommSplit(world, 0, job_.rank(), &lane.comm, nullptr), "ncclCommSplit");
      check_cuda(cudaStreamCreateWithFlags(&lane.stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    }
    check_nccl(ncclCommDestroy(world), "ncclCommDestroy(world)");
    warm_up(lists.of(job_.rank(), NcclPhase::WarmUp));
  }
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;
  ~NcclCommunicator() override {
    for (Lane& lane : lanes_) {
      if (lane.comm != nullptr && !aborted_) {
        (void)ncclCommFinalize(lane.comm);
        (void)ncclCommDestroy(lane.comm);
      }
      if (lane.stream != nullptr) (void)cudaStreamDestroy(lane.stream);
    }
  }

  [[nodiscard]] int rank() const override { return job_.rank(); }
  [[nodiscard]] int size() const override { return job_.size(); }
  [[nodiscard]] int local_rank() const override { return job_.local_rank(); }
  [[nodiscard]] int local_size() const override { return job_.local_size(); }

  void begin_pass(AttentionPass pass) override {
    assembler_.begin(pass);
    records_.clear();
  }

  // Every communicator stops; what is in flight is abandoned (the job is ending).
  void abort_nccl() const {
    if (aborted_) return;
    aborted_ = true;
    for (const Lane& lane : lanes_) {
      if (lane.comm != nullptr) (void)ncclCommAbort(lane.comm);
    }
  }

 protected:
  std::unique_ptr<Request::State> post_send(ConstBuffer data, const Envelope& e) override {
    return post(e, const_cast<void*>(data.data), nullptr);  // NOLINT: read only (cudaMemcpyHostToDevice)
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
    auto& t = static_cast<Transfer&>(state);
    if (t.group->event == nullptr) {  // the executor waits on a group it never completed: NCCL would hang
      throw backend_error(rank(), e, fmt::format("its NCCL group was never issued: {}", assembler_.incomplete(t.group_index)));
    }
    const Lane& lane = lanes_[static_cast<std::size_t>(t.group->lane)];
    ncclResult_t async = ncclSuccess;
    check_nccl(ncclCommGetAsyncError(lane.comm, &async), "ncclCommGetAsyncError");
    if (async != ncclSuccess && async != ncclInProgress) throw backend_error(rank(), e, ncclGetErrorString(async));
    const cudaError_t query = cudaEventQuery(t.group->event);
    if (query == cudaErrorNotReady) return false;
    check_cuda(query, "cudaEventQuery(NCCL group)");
    if (t.host_destination != nullptr) {
      check_cuda(cudaMemcpy(t.host_destination, t.staging, t.bytes, cudaMemcpyDeviceToHost), "cudaMemcpy(NCCL receive)");
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
  std::unique_ptr<Request::State> post(const Envelope& e, void* host_source, void* host_destination) {
    const NcclGroupAssembler::Slot slot = assembler_.post(e);
    const NcclGroup& group = assembler_.group(slot.group);
    if (records_.size() <= slot.group) records_.resize(slot.group + 1);
    auto& record = records_[slot.group];
    if (!record) record = std::make_shared<GroupRecord>(group.ops.size());
    record->lane = comm_index(group.comm);
    const std::size_t bytes = e.bytes();
    void* staging = pool_.take(bytes);
    if (host_source != nullptr) {
      check_cuda(cudaMemcpyAsync(staging, host_source, bytes, cudaMemcpyHostToDevice,
                                 lanes_[static_cast<std::size_t>(record->lane)].stream),
                 "cudaMemcpyAsync(NCCL send)");
    }
    record->buffers[slot.op] = staging;
    auto transfer = std::make_unique<Transfer>(*this, record, slot.group, staging, bytes, host_destination);
    for (const std::size_t ready : assembler_.take_ready()) issue(assembler_.group(ready), *records_[ready]);
    return transfer;
  }

  // The whole group in one ncclGroupStart / ncclGroupEnd on its communicator's stream.
  void issue(const NcclGroup& group, GroupRecord& record) {
    const Lane& lane = lanes_[static_cast<std::size_t>(comm_index(group.comm))];
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (std::size_t o = 0; o < group.ops.size(); ++o) {
      const NcclOp& op = group.ops[o];
      const std::size_t count = op.bytes / dtype_size(op.dtype);
      const ncclResult_t status = op.direction == NcclDirection::Send
                                      ? ncclSend(record.buffers[o], count, nccl_type(op.dtype), op.peer, lane.comm, lane.stream)
                                      : ncclRecv(record.buffers[o], count, nccl_type(op.dtype), op.peer, lane.comm, lane.stream);
      if (status != ncclSuccess) {
        (void)ncclGroupEnd();
        check_nccl(status, fmt::format("{} ({} rank {})", op.direction == NcclDirection::Send ? "ncclSend" : "ncclRecv",
                                       describe_payload(op), op.peer));
      }
    }
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
    check_cuda(cudaEventCreateWithFlags(&record.event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    check_cuda(cudaEventRecord(record.event, lane.stream), "cudaEventRecord(NCCL group)");
  }

  // One element each way with every peer of every communicator, then wait for all of it, so
  // NCCL's connections exist before the first timed transfer.
  void warm_up(const NcclOpList& groups) {
    std::vector<std::unique_ptr<GroupRecord>> records;
    for (const NcclGroup& group : groups) {
      auto& record = records.emplace_back(std::make_unique<GroupRecord>(group.ops.size()));
      for (std::size_t o = 0; o < group.ops.size(); ++o) {
        record->buffers[o] = pool_.take(group.ops[o].bytes);
        check_cuda(cudaMemset(record->buffers[o], 0, group.ops[o].bytes), "cudaMemset(NCCL warm-up)");
      }
      issue(group, *record);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options().timeout_s);
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const Lane& lane = lanes_[static_cast<std::size_t>(comm_index(groups[g].comm))];
      for (;;) {
        ncclResult_t async = ncclSuccess;
        check_nccl(ncclCommGetAsyncError(lane.comm, &async), "ncclCommGetAsyncError");
        if (async != ncclSuccess && async != ncclInProgress) check_nccl(async, "NCCL warm-up");
        const cudaError_t query = cudaEventQuery(records[g]->event);
        if (query == cudaSuccess) break;
        if (query != cudaErrorNotReady) check_cuda(query, "cudaEventQuery(NCCL warm-up)");
        if (std::chrono::steady_clock::now() > deadline) {
          abort_nccl();
          throw Error(Problem{fmt::format("rank {}: NCCL warm-up on the {}", rank(), to_string(groups[g].comm)),
                              fmt::format("the exchange with rank {} did not complete within {} s", groups[g].ops.front().peer,
                                          options().timeout_s),
                              "", "a rank did not start, or NCCL cannot connect (NCCL_DEBUG=INFO shows the transports)"});
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
      for (std::size_t o = 0; o < groups[g].ops.size(); ++o) pool_.give(groups[g].ops[o].bytes, records[g]->buffers[o]);
    }
  }

  Communicator& job_;
  NcclGroupAssembler assembler_;
  std::array<Lane, kNcclCommCount> lanes_{};
  std::vector<std::shared_ptr<GroupRecord>> records_;  // [group] of the current pass
  StagingPool pool_;
  mutable bool aborted_ = false;
};

Transfer::~Transfer() {
  if (!done) owner.abort_nccl();
}

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(Communicator& job, const NcclOpLists& lists, int device) {
  return std::make_unique<NcclCommunicator>(job, lists, device);
}

}  // namespace burst::rt::gpu
