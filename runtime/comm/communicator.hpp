// What the distributed executor communicates with: point-to-point ring transfers, a few
// collectives, byte counters and a job-wide abort, behind one backend-neutral interface.
//
// A ring step of distributed attention sends one block to the next rank of its ring and
// receives one from the previous, double-buffered: step s+1's transfer is posted before step
// s computes, then waited. So the interface is non-blocking (isend / irecv return a Request,
// wait / wait_all complete it) and every message names its Channel (kv ring, q ring, dq ring:
// the backward's read ring and its dQ ring run at once), its ring step and its RingLevel. Two
// messages match only when sender, receiver, channel, step and level all agree (comm/tag.hpp),
// so transfers of different channels or steps can be in flight together and posted in any
// order.
//
// Nothing hangs: every wait (collectives included, they are posted non-blocking too) gives up
// after CommOptions::timeout_s with a burst::Error naming this rank, the peer, the channel, the
// step and the direction, e.g.
//   "rank 2: no message from rank 1 on the q ring at step 3 within 60 s"
// and the timed-out request is cancelled. A caller that cannot recover calls abort_job, which
// ends every rank of the job (DESIGN.md: a failing rank aborts the job instead of hanging it).
//
// Backends: SelfCommunicator (one rank, self_communicator.hpp), MpiCommunicator (OpenMPI,
// mpi_communicator.hpp). An NCCL backend maps onto the same interface:
//   isend / irecv   -> ncclSend / ncclRecv on the channel's own CUDA stream (one stream per
//                      Channel), the sends and receives of one ring step in one
//                      ncclGroupStart / ncclGroupEnd; spans become device pointers
//   Request, test   -> a cudaEvent recorded on that stream after the group, cudaEventQuery
//   timeout         -> ncclCommGetAsyncError while polling, ncclCommAbort when it expires
//   tags            -> NCCL matches by posting order per (peer, stream), not tags: one stream
//                      per channel and steps posted in order give the same guarantee
//   allreduce_sum   -> ncclAllReduce(ncclSum); barrier -> a one-element ncclAllReduce;
//   gather_to_root  -> ncclSend to the root / ncclRecv from every rank, in one group
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

namespace burst::rt {

// Which stream of messages a transfer belongs to. Collective counts the bytes of allreduce_sum
// and gather_to_root; point-to-point messages may use it too.
enum class Channel { KvRing, QRing, DqRing, Collective };
inline constexpr int kChannelCount = 4;

// Which ring of the plan a transfer travels: the single ring of a flat plan, or the inner
// (within a node) or outer (across nodes) ring of a double ring.
enum class RingLevel { Flat, Intra, Inter };
inline constexpr int kRingLevelCount = 3;

// "kv ring", "q ring", "dq ring", "collective channel": as error messages say them.
std::string_view to_string(Channel channel);
// "flat", "intra", "inter": the plan's ring level spellings.
std::string_view to_string(RingLevel level);
// Parses a plan's ring level; throws burst::Error naming `where` and the valid spellings.
RingLevel parse_ring_level(std::string_view text, const std::string& where);

struct CommOptions {
  double timeout_s = 60;  // a wait longer than this fails (burst::Error) instead of hanging
};

// What a request is about, for matching, counting and error messages.
enum class Operation { Send, Recv, Barrier, AllreduceSum, GatherToRoot };
struct Envelope {
  Operation operation = Operation::Send;
  int peer = -1;  // the other rank of a send or receive; -1 for collectives
  Channel channel = Channel::Collective;
  int step = 0;
  RingLevel level = RingLevel::Flat;
  std::size_t count = 0;  // floats
};

// A movable handle on one posted operation. A default-constructed or completed Request is not
// pending; waiting on it does nothing. Destroying a pending Request cancels it (the backend
// must still be alive), so a forgotten receive never writes into freed memory later.
class Request {
 public:
  // Backend-specific progress state; each backend derives its own.
  struct State {
    virtual ~State() = default;
  };

  Request() = default;
  Request(Envelope envelope, std::unique_ptr<State> state)
      : envelope_(envelope), state_(std::move(state)) {}
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
  [[nodiscard]] const CommOptions& options() const { return options_; }

  // Non-blocking transfers. The span must stay valid (and, for a send, unchanged) until the
  // Request completes. A receive must be exactly as long as the message. Bad peers or steps
  // throw burst::Error.
  Request isend(std::span<const float> data, int peer, Channel channel, int step, RingLevel level);
  Request irecv(std::span<float> data, int peer, Channel channel, int step, RingLevel level);

  // Completes the request(s), or throws the timeout Error after cancelling the late one(s).
  // wait_all has one deadline for the whole set.
  void wait(Request& request);
  void wait_all(std::span<Request> requests);

  // Collectives: every rank calls them in the same order. They time out like a wait.
  void barrier();
  void allreduce_sum(std::span<float> data);  // in place: data = sum over ranks
  // all_at_root[r * mine.size() ...] = rank r's `mine` on rank 0; other ranks pass any span
  // (it is not touched). Every rank contributes the same number of floats.
  void gather_to_root(std::span<const float> mine, std::span<float> all_at_root);

  // Payload bytes this rank has handed to isend (and to the collectives, counted under
  // Channel::Collective and RingLevel::Flat) since construction or the last reset.
  [[nodiscard]] std::uint64_t bytes_sent(RingLevel level) const;
  [[nodiscard]] std::uint64_t bytes_sent(Channel channel) const;
  void reset_counters();

  // Ends every process of the job with `exit_code` (abort_job prints the reason first): the
  // backend ends the other ranks (abort_backend), then this process exits without unwinding.
  [[noreturn]] void abort_all(int exit_code) const;

 protected:
  // Backends post an operation and return its progress state (nullptr: already complete).
  virtual std::unique_ptr<Request::State> post_send(std::span<const float> data, const Envelope& e) = 0;
  virtual std::unique_ptr<Request::State> post_recv(std::span<float> data, const Envelope& e) = 0;
  virtual std::unique_ptr<Request::State> post_barrier() = 0;
  virtual std::unique_ptr<Request::State> post_allreduce_sum(std::span<float> data) = 0;
  virtual std::unique_ptr<Request::State> post_gather(std::span<const float> mine, std::span<float> all) = 0;
  // True once the operation has completed; throws burst::Error if it failed. Destroying a
  // state whose operation has not completed withdraws (cancels) it.
  virtual bool test(Request::State& state, const Envelope& e) = 0;
  // Ends the other processes of the job (MPI_Abort); may or may not return.
  virtual void abort_backend(int exit_code) const = 0;

 private:
  void check_point_to_point(const Envelope& e) const;
  void count(const Envelope& e);

  CommOptions options_;
  std::array<std::uint64_t, kRingLevelCount> bytes_by_level_{};
  std::array<std::uint64_t, kChannelCount> bytes_by_channel_{};
};

// Prints "rank R: <message>" to stderr and ends the whole job (MPI_Abort under MPI), so a
// failing rank never leaves the others waiting. Exit code 1.
[[noreturn]] void abort_job(const Communicator& comm, const std::string& message);

}  // namespace burst::rt
