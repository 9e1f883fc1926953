// The OpenMPI communicator (mpi_communicator.hpp): each posted operation is one MPI_Request,
// polled by the base class's wait loop through test(). Point-to-point messages travel as
// MPI_BYTE (a receive checks the byte count, whatever the dtype); collectives use the MPI
// datatype of their dtype so MPI can reduce them.
#include "runtime/comm/mpi_communicator.hpp"

#include <climits>
#include <string>

#include <fmt/format.h>
#include <mpi.h>

#include "common/error.hpp"
#include "runtime/comm/comm_errors.hpp"
#include "runtime/comm/detail/tag.hpp"

namespace burst::rt {
namespace {

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

bool mpi_finalized() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::F32: return MPI_FLOAT;
    case DType::F64: return MPI_DOUBLE;
    case DType::BF16: return MPI_UINT16_T;  // moved, never reduced (the base class refuses)
    case DType::I32: return MPI_INT32_T;
    case DType::I64: return MPI_INT64_T;
    case DType::U64: return MPI_UINT64_T;
    case DType::Bytes: return MPI_BYTE;
  }
  return MPI_BYTE;
}

MPI_Op mpi_op(ReduceOp op) { return op == ReduceOp::Max ? MPI_MAX : MPI_SUM; }

// One MPI request. Destroying it while it is still active withdraws it: a receive is
// cancelled and completed, a send is freed (MPI delivers it or drops it with the job). A
// collective can be neither cancelled nor freed (MPI forbids both for non-blocking
// collectives), so a late one is left as it is: its buffers are the caller's to keep, and the
// caller's next move after a timeout is to abort the job.
struct MpiState final : Request::State {
  explicit MpiState(Operation op) : operation(op) {}
  MpiState(const MpiState&) = delete;
  MpiState& operator=(const MpiState&) = delete;
  ~MpiState() override {
    if (request == MPI_REQUEST_NULL || mpi_finalized()) return;
    if (operation == Operation::Recv) {
      MPI_Cancel(&request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else if (operation == Operation::Send) {
      MPI_Request_free(&request);
    }
  }

  Operation operation;
  MPI_Request request = MPI_REQUEST_NULL;
};

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(CommOptions options) : Communicator(options) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    // The ranks that share this node's memory are the ranks on this node.
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_size(node, &local_size_);
    MPI_Comm_free(&node);
    int* tag_ub = nullptr;
    int found = 0;
    MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tag_ub, &found);
    tag_ub_ = found ? *tag_ub : 32767;  // the least MPI allows
  }
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;
  ~MpiCommunicator() override {
    if (!mpi_finalized()) MPI_Comm_free(&comm_);
  }

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] int local_rank() const override { return local_rank_; }
  [[nodiscard]] int local_size() const override { return local_size_; }

  void abort_backend(int exit_code) const override { MPI_Abort(comm_, exit_code); }

 protected:
  std::unique_ptr<Request::State> post_send(ConstBuffer data, const Envelope& e) override {
    auto state = std::make_unique<MpiState>(e.operation);
    check(e, MPI_Isend(data.data, count_of(e, data.bytes()), MPI_BYTE, e.peer, tag_of(e), comm_, &state->request));
    return state;
  }

  std::unique_ptr<Request::State> post_recv(MutBuffer data, const Envelope& e) override {
    auto state = std::make_unique<MpiState>(e.operation);
    check(e, MPI_Irecv(data.data, count_of(e, data.bytes()), MPI_BYTE, e.peer, tag_of(e), comm_, &state->request));
    return state;
  }

  std::unique_ptr<Request::State> post_barrier() override {
    auto state = std::make_unique<MpiState>(Operation::Barrier);
    check(Envelope{Operation::Barrier}, MPI_Ibarrier(comm_, &state->request));
    return state;
  }

  std::unique_ptr<Request::State> post_allreduce(MutBuffer data, const Envelope& e) override {
    auto state = std::make_unique<MpiState>(e.operation);
    check(e, MPI_Iallreduce(MPI_IN_PLACE, data.data, count_of(e, e.count), mpi_type(e.dtype), mpi_op(e.op), comm_,
                            &state->request));
    return state;
  }

  std::unique_ptr<Request::State> post_allgather(ConstBuffer mine, MutBuffer all, const Envelope& e) override {
    auto state = std::make_unique<MpiState>(e.operation);
    const int n = count_of(e, e.count);
    const MPI_Datatype t = mpi_type(e.dtype);
    check(e, MPI_Iallgather(mine.data, n, t, all.data, n, t, comm_, &state->request));
    return state;
  }

  std::unique_ptr<Request::State> post_reduce_scatter(ConstBuffer all, MutBuffer mine, const Envelope& e) override {
    auto state = std::make_unique<MpiState>(e.operation);
    check(e, MPI_Ireduce_scatter_block(all.data, mine.data, count_of(e, e.count), mpi_type(e.dtype), mpi_op(e.op),
                                       comm_, &state->request));
    return state;
  }

  std::unique_ptr<Request::State> post_gather(ConstBuffer mine, MutBuffer all, const Envelope& e) override {
    auto state = std::make_unique<MpiState>(e.operation);
    const int n = count_of(e, e.count);
    const MPI_Datatype t = mpi_type(e.dtype);
    check(e, MPI_Igather(mine.data, n, t, all.data, n, t, 0, comm_, &state->request));
    return state;
  }

  std::unique_ptr<Request::State> post_broadcast(MutBuffer data, int root, const Envelope& e) override {
    auto state = std::make_unique<MpiState>(e.operation);
    check(e, MPI_Ibcast(data.data, count_of(e, e.count), mpi_type(e.dtype), root, comm_, &state->request));
    return state;
  }

  bool test(Request::State& state, const Envelope& e) override {
    auto& s = static_cast<MpiState&>(state);
    int done = 0;
    MPI_Status status;
    const int rc = MPI_Test(&s.request, &done, &status);
    if (rc != MPI_SUCCESS) {
      s.request = MPI_REQUEST_NULL;  // an operation that failed is complete
      throw backend_error(rank_, e, mpi_error_string(rc));
    }
    if (!done) return false;
    if (e.operation == Operation::Recv) {
      int received = 0;
      MPI_Get_count(&status, MPI_BYTE, &received);
      if (static_cast<std::size_t>(received) != e.bytes()) {
        throw size_mismatch_error(rank_, e, static_cast<std::size_t>(received));
      }
    }
    return true;
  }

 private:
  void check(const Envelope& e, int rc) const {
    if (rc != MPI_SUCCESS) throw backend_error(rank_, e, mpi_error_string(rc));
  }

  // MPI counts are ints: `n` elements (or bytes, for point-to-point) of one call.
  int count_of(const Envelope& e, std::size_t n) const {
    if (n > static_cast<std::size_t>(INT_MAX)) {
      throw Error(Problem{fmt::format("rank {}", rank_), fmt::format("{} needs a count of {}", describe(e), n),
                          fmt::format("at most {} per MPI call", INT_MAX), "split the block into several messages"});
    }
    return static_cast<int>(n);
  }

  int tag_of(const Envelope& e) const {
    const long long tag = message_tag(e.channel, e.step, e.level);
    if (tag > tag_ub_) {
      throw Error(Problem{fmt::format("rank {}", rank_),
                          fmt::format("{} needs MPI tag {}, above this MPI's MPI_TAG_UB {}", describe(e), tag, tag_ub_),
                          fmt::format("steps 0 to {}", max_step_for_tag_ub(tag_ub_)),
                          "number ring steps within one ring pass (they may restart at 0 every layer)"});
    }
    return static_cast<int>(tag);
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  long long tag_ub_ = 32767;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator(CommOptions options) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized || mpi_finalized()) {
    throw Error(Problem{"make_mpi_communicator", "MPI is not initialized", "",
                        "create an MpiSession in main first and keep it alive while communicators exist"});
  }
  return std::make_unique<MpiCommunicator>(options);
}

}  // namespace burst::rt
