// What the distributed executor communicates with: point-to-point ring transfers, typed
// collectives, byte counters and a job-wide abort, behind one backend-neutral interface.
//
// A ring step of distributed attention sends one block to the next rank of its ring and
// receives one from the previous, double-buffered: step s+1's transfer is posted before step
// s computes, then waited. So the interface is non-blocking (isend / irecv return a Request,
// wait / wait_all complete it) and every message names its Channel (kv ring, q ring, dq ring,
// dkv ring, the Ulysses all-to-all), its ring step and its RingLevel. Two messages match only
// when sender, receiver, channel, step and level all agree (comm/tag.hpp), so transfers of
// different channels or steps can be in flight together and posted in any order.
//
// Payloads are typed (comm/dtype.hpp): a buffer is (pointer, count, dtype) and everything is
// counted in bytes, so a bf16 block costs 2 bytes an element on the wire and in the counters,
// and a receive whose byte count differs from the message is an error naming both sizes.
//
// Nothing hangs: every wait (collectives included, they are posted non-blocking too) gives up
// after CommOptions::timeout_s with a burst::Error naming this rank, the peer, the channel, the
// step and the direction, e.g.
//   "rank 2: no message from rank 1 on the q ring at step 3 within 60 s"
// and the timed-out request is withdrawn (a receive is cancelled; a collective, which MPI
// cannot cancel, is left to the abort that must follow). A caller that cannot recover calls
// abort_job, which ends every rank of the job: a failing rank aborts the job instead of
// hanging it (docs/runtime-comm.md, "Aborting").
//
// Backends: LoopbackCommunicator (every rank a thread of this process, and the one-rank
// make_self_communicator; loopback_communicator.hpp), MpiCommunicator (OpenMPI,
// mpi_communicator.hpp). How NCCL maps onto the same operations (docs/runtime-comm.md):
//   isend / irecv   -> ncclSend / ncclRecv, every send and receive of one ring step on one
//                      communicator in one ncclGroupStart / ncclGroupEnd. NCCL runs the
//                      operations of a communicator one after another whatever the stream, so
//                      rings that must run at once (read ring, accumulator ring; intra and
//                      inter level) get a communicator each (ncclCommSplit), not a stream each
//   tags            -> none: NCCL matches by posting order per (communicator, peer). The order
//                      is a pure function of the plan (runtime/schedule/nccl_op_list.hpp) whose
//                      pairing and freedom from deadlock a CPU test checks for every preset
//   Request, test   -> a cudaEvent recorded after the group, cudaEventQuery
//   timeout         -> ncclCommGetAsyncError while polling, ncclCommAbort when it expires
//   bootstrap       -> rank 0's ncclGetUniqueId sent by broadcast (nccl_bootstrap.hpp)
//   allreduce       -> ncclAllReduce (ncclSum, ncclMax); allgather -> ncclAllGather;
//   reduce_scatter  -> ncclReduceScatter; barrier -> a one-element ncclAllReduce;
//   broadcast       -> ncclBroadcast; gather_to_root -> sends to the root in one group;
//   all_to_all      -> the same send / receive pairs, in one group
//   abort_job       -> ncclCommAbort, then MPI_Abort of the launcher's job
// docs/runtime-comm.md has the whole story.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "runtime/comm/dtype.hpp"

namespace burst::rt {

// Which stream of messages a transfer belongs to: the read rings (K,V blocks; the query pack),
// the travelling gradient accumulators (dQ of the query-side backward, dK,dV of the K,V-ring
// backward), the Ulysses all-to-all, and Collective for the collectives (point-to-point
// messages may use it too).
enum class Channel { KvRing, QRing, DqRing, DkvRing, Ulysses, Collective };
inline constexpr int kChannelCount = 6;

// Which ring of the plan a transfer travels: the single ring of a flat plan, or the inner
// (within a node) or outer (across nodes) ring of a double ring.
enum class RingLevel { Flat, Intra, Inter };
inline constexpr int kRingLevelCount = 3;

// "kv ring", "q ring", "dq ring", "dkv ring", "ulysses all-to-all", "collective channel": as
// error messages say them.
std::string_view to_string(Channel channel);
// "flat", "intra", "inter": the plan's ring level spellings.
std::string_view to_string(RingLevel level);
// Parses a plan's ring level; throws burst::Error naming `where` and the valid spellings.
RingLevel parse_ring_level(std::string_view text, const std::string& where);

// Which pass of the attention the executor's next transfers belong to.
enum class AttentionPass { Forward, Backward };

struct CommOptions {
  double timeout_s = 60;  // a wait longer than this fails (burst::Error) instead of hanging
};

// What a request is about, for matching, counting and error messages.
enum class Operation { Send, Recv, Barrier, Allreduce, Allgather, ReduceScatter, GatherToRoot, Broadcast };
enum class ReduceOp { Sum, Max };
struct Envelope {
  Operation operation = Operation::Send;
  int peer = -1;  // the other rank of a send or receive; -1 for collectives
  Channel channel = Channel::Collective;
  int step = 0;
  RingLevel level = RingLevel::Flat;
  std::size_t count = 0;  // elements
  DType dtype = DType::F32;
  ReduceOp op = ReduceOp::Sum;  // allreduce and reduce_scatter
  [[nodiscard]] std::size_t bytes() const { return count * dtype_size(dtype); }
};

// A movable handle on one posted operation. A default-constructed or completed Request is not
// pending; waiting on it does nothing. Destroying a pending Request withdraws it (the backend
// must still be alive): a receive is cancelled, so a forgotten receive never writes into freed
// memory later; a collective cannot be cancelled, so its backend leaves it to the job's abort
// that must follow (MPI) or aborts its communicator (NCCL): keep a posted collective's buffers
// alive until it is waited for.
class Request {
 public:
  // Backend-specific progress state; each backend derives its own.
  struct State {
    virtual ~State() = default;
  };

  Request() = default;
  Request(Envelope envelope, std::unique_ptr<State> state) : envelope_(envelope), state_(std::move(state)) {}
  Request(Request&&) noexcept = default;
  Request& operator=(Request&&) noexcept = default;
  ~Request() = default;

  [[nodiscard]] bool pending() const { return state_ != nullptr; }
  [[nodiscard]] const Envelope& envelope() const { return envelope_; }

 private:
  friend class Communicator;
  Envelope envelope_;
  std::unique_ptr<State> state_;
};

class Communicator {
 public:
  explicit Communicator(CommOptions options) : options_(options) {}
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  virtual ~Communicator() = default;

  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  // This rank among the ranks on its node (0 .. ranks on the node - 1): which GPU it drives.
  [[nodiscard]] virtual int local_rank() const { return 0; }
  // The ranks on this node, sharing its memory and GPUs.
  [[nodiscard]] virtual int local_size() const { return 1; }
  [[nodiscard]] const CommOptions& options() const { return options_; }
  // Whether transfers and collectives may be handed device memory: NCCL, and the loopback when
  // its copy is the device copy. The others read host memory only.
  [[nodiscard]] virtual bool reads_device_memory() const { return false; }
  // Whether allreduce and reduce_scatter take bf16 (summed in fp32 and rounded once on the host
  // backends, comm/detail/reduce_in_order.hpp; NCCL's own bf16 reductions): the loopback, a
  // subgroup and NCCL do, MPI does not (it has no bf16 type; check_collective refuses it there).
  [[nodiscard]] virtual bool reduces_bf16() const { return false; }

  // This rank's device work is queued on `stream` (a cudaStream_t) from now on; a transport that
  // orders its copies by events on the ranks' streams (the GPU loopback) uses it, others ignore it.
  virtual void use_device_stream(void* /*stream*/) {}

  // The executor starts a forward or backward pass of its attention. A backend that issues
  // transfers in an order fixed in advance (NCCL: the pass's op list, nccl_group_assembler.hpp)
  // follows it; the others need not.
  virtual void begin_pass(AttentionPass) {}

  // Non-blocking transfers. The buffer must stay valid (and, for a send, unchanged) until the
  // Request completes. A receive must be exactly as many bytes as the message. Bad peers or
  // steps throw burst::Error.
  Request isend(ConstBuffer data, int peer, Channel channel, int step, RingLevel level);
  Request irecv(MutBuffer data, int peer, Channel channel, int step, RingLevel level);

  // Completes the request(s), or throws the timeout Error after withdrawing the late one(s).
  // wait_all has one deadline for the whole set.
  void wait(Request& request);
  void wait_all(std::span<Request> requests);

  // Collectives over every rank: each rank calls them in the same order with the same dtype
  // and counts. They time out like a wait. Reductions take fp32, fp64 and the integer dtypes, and
  // bf16 where reduces_bf16().
  void barrier();
  void allreduce(MutBuffer data, ReduceOp op);  // in place
  // all[r * mine.count ...] = rank r's `mine`, on every rank.
  void allgather(ConstBuffer mine, MutBuffer all);
  // mine = the op over ranks of all[rank * mine.count ...]: rank r ends with the r-th share.
  void reduce_scatter(ConstBuffer all, MutBuffer mine, ReduceOp op);
  // The same two, posted: they complete when waited (wait / wait_all), so compute can run while
  // they are in flight (ZeRO's prefetched gathers and early reduce-scatters, zero_model.hpp).
  // Every rank posts its collectives in the same order; the buffers stay valid until completion.
  [[nodiscard]] Request iallgather(ConstBuffer mine, MutBuffer all);
  [[nodiscard]] Request ireduce_scatter(ConstBuffer all, MutBuffer mine, ReduceOp op);
  // all_at_root[r * mine.count ...] = rank r's `mine` on rank 0; other ranks pass any buffer
  // (it is not touched). Every rank contributes the same count.
  void gather_to_root(ConstBuffer mine, MutBuffer all_at_root);
  // Rank `root`'s `data` on every rank (e.g. the NCCL unique id rank 0 made).
  void broadcast(MutBuffer data, int root);

  // All-to-all within `group` (world ranks, this rank among them, the same list on each):
  // block i of `send` (send.count / group size elements) goes to group[i], and block i of
  // `recv` comes from group[i]; this rank's own block is neither read nor written (the caller
  // places it, in whatever memory its buffers are: the executor's are device memory, which
  // only the kernels' memory can copy). Point-to-point messages on
  // `channel` at `step`, counted under `level`, so it times out and counts like a ring step.
  void all_to_all(ConstBuffer send, MutBuffer recv, std::span<const int> group, Channel channel, int step,
                  RingLevel level);

  // Payload bytes this rank has handed to isend (and to the collectives, counted under
  // Channel::Collective and RingLevel::Flat) since construction or the last reset.
  [[nodiscard]] std::uint64_t bytes_sent(RingLevel level) const;
  [[nodiscard]] std::uint64_t bytes_sent(Channel channel) const;
  [[nodiscard]] std::uint64_t bytes_sent(Channel channel, RingLevel level) const;
  void reset_counters();

  // The timeout message of a collective this rank gave up on, which may still be pending (MPI
  // can neither cancel nor free one); empty when there is none. The job must then end with
  // abort_job: freeing the communicator or finalizing MPI with it pending waits for ever, or
  // crashes once the late rank comes (runtime/comm/job.hpp ends it so).
  [[nodiscard]] const std::string& pending_collective() const { return pending_collective_; }

  // Ends every process of the job with `exit_code` (abort_job prints the reason first): the
  // backend ends the other ranks (abort_backend), then this process exits without unwinding.
  [[noreturn]] void abort_all(int exit_code) const;

 protected:
  friend class SubgroupCommunicator;  // posts its members' messages on its parent (subgroup_communicator.hpp)
  // Backends post an operation and return its progress state (nullptr: already complete).
  // Buffers reach them checked: dtypes and counts agree with the envelope.
  virtual std::unique_ptr<Request::State> post_send(ConstBuffer data, const Envelope& e) = 0;
  virtual std::unique_ptr<Request::State> post_recv(MutBuffer data, const Envelope& e) = 0;
  virtual std::unique_ptr<Request::State> post_barrier() = 0;
  virtual std::unique_ptr<Request::State> post_allreduce(MutBuffer data, const Envelope& e) = 0;
  virtual std::unique_ptr<Request::State> post_allgather(ConstBuffer mine, MutBuffer all, const Envelope& e) = 0;
  virtual std::unique_ptr<Request::State> post_reduce_scatter(ConstBuffer all, MutBuffer mine, const Envelope& e) = 0;
  virtual std::unique_ptr<Request::State> post_gather(ConstBuffer mine, MutBuffer all, const Envelope& e) = 0;
  virtual std::unique_ptr<Request::State> post_broadcast(MutBuffer data, int root, const Envelope& e) = 0;
  // True once the operation has completed; throws burst::Error if it failed. Destroying a
  // state whose operation has not completed withdraws (cancels) it.
  virtual bool test(Request::State& state, const Envelope& e) = 0;
  // Ends the other processes of the job (MPI_Abort); may or may not return.
  virtual void abort_backend(int exit_code) const = 0;

 private:
  void check_point_to_point(const Envelope& e) const;
  // Throws burst::Error naming the collective when its other buffer (checked only `here`) is not
  // `expected` elements of the envelope's dtype, or the dtype cannot be reduced.
  void check_collective(const Envelope& e, DType out_dtype, std::size_t out_count, std::size_t expected,
                        bool here) const;
  void run_collective(const Envelope& e, std::unique_ptr<Request::State> state);
  void count(const Envelope& e);

  CommOptions options_;
  std::string pending_collective_;
  std::array<std::uint64_t, static_cast<std::size_t>(kRingLevelCount) * kChannelCount> bytes_{};  // [channel][level]
};

// Prints "rank R: <message>" to stderr (the message as it is where it already starts so, as the
// communicator's own errors do) and ends the whole job (MPI_Abort under MPI), so a
// failing rank never leaves the others waiting. Exit code 1.
[[noreturn]] void abort_job(const Communicator& comm, const std::string& message);

}  // namespace burst::rt
