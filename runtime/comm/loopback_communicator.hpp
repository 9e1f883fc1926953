// Every rank of a job in one process: P communicators, one per rank, that deliver messages
// between the threads driving them. It is the job's backend when the ranks are threads
// (`burst run --loopback`: a whole P-rank ring on one machine without mpirun, on the CPU
// kernels or, with --device cuda, all ranks on one GPU), and with P = 1 it is the one-rank
// communicator every test and single-process run uses (make_self_communicator).
//
// Matching is MPI's: a message is for (receiver, sender, tag), the tag made of channel, step
// and level (comm/tag.hpp), and the k-th send of one such triple meets its k-th receive.
// Sends are eager: the payload is copied at isend, which is then complete, and lands in the
// first receive posted for it, or waits in a mailbox until one is posted. A receive nothing is
// sent for waits out the timeout with the error an MPI rank gives.
//
// Collectives meet by order, as MPI's do: each rank's k-th collective goes to the k-th
// meeting point, where every rank leaves a copy of its input; once all P have arrived, each
// rank computes its own result from the copies (reductions add in rank order, so every rank
// gets the same bits) and the last to leave clears the point. Ranks that call different
// collectives as their k-th (a program error MPI would hang or crash on) get an error naming
// both calls.
//
// Point-to-point payloads are moved by the job's MessageCopy: memcpy for host buffers, or
// (--loopback --device cuda, every rank a thread driving the same GPU) a copy that also moves
// device memory (runtime/cuda/device_message_copy.hpp). Once a rank has said which stream its
// device work is queued on (use_device_stream), its messages are ordered by CUDA events on the
// two ranks' streams: the copy runs on the receiver's stream after an event of the sender's, and
// the sender's stream waits for the copy before it may reuse or free the buffer; no host waits.
// A message sent before its receive is posted is kept in a copy of its own (on the device, made
// on the sender's stream) until the receive takes it. Collectives on host buffers go through
// the copy's synchronous form: their inputs into host copies at the meeting point, their
// results out. The GPU copy runs collectives on device buffers on the device (ZeRO's on a
// GPU-resident model state): each rank's input kept in staging on its own stream, each rank's
// result reduced or gathered from them on its stream after their events (collective_on_device).
// The process is the whole job, so aborting the job is exiting the process (abort_all).
// Thread safety: one thread per communicator; the communicators of one job share their
// mailboxes under one mutex.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <vector>

#include "runtime/comm/communicator.hpp"

namespace burst::rt {

class LoopbackHub;  // the mailboxes and meeting points of one job (loopback_communicator.cpp)

// A message sent before its receive was posted, in a copy of its own (what the copy made).
struct KeptMessage {
  virtual ~KeptMessage() = default;
  std::size_t bytes = 0;
};

// How a loopback job's ranks move bytes between their memories.
class MessageCopy {
 public:
  virtual ~MessageCopy() = default;
  // Whether buffers handed to the job may be device memory.
  [[nodiscard]] virtual bool reads_device_memory() const = 0;
  // `bytes` from `src` to `dst`, complete when it returns: collective inputs and results.
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  // Rank `to` posts a receive now: what a later deliver orders its copy after (null: nothing).
  [[nodiscard]] virtual std::unique_ptr<KeptMessage> receive_posted(int /*to*/) { return nullptr; }
  // A message of rank `from` into the posted receive `dst` of rank `to` (`posted`: what
  // receive_posted gave it): after what `from` queued before sending, before what `to` queues
  // once its receive completed, and before `from` reuses `src` (on the host: a copy, at once).
  virtual void deliver(void* dst, int /*to*/, const void* src, int /*from*/, std::size_t bytes,
                       KeptMessage* /*posted*/) {
    copy(dst, src, bytes);
  }
  // A message of rank `from` whose receive is not posted yet, kept for deliver_kept.
  [[nodiscard]] virtual std::unique_ptr<KeptMessage> keep(const void* src, int from, std::size_t bytes);
  // A kept message into the receive `dst` of rank `to`, ordered as deliver's.
  virtual void deliver_kept(void* dst, int to, KeptMessage& message);
  // Rank `rank` queues its device work on `stream` (a cudaStream_t) from now on.
  virtual void use_stream(int /*rank*/, void* /*stream*/) {}
  // Whether rank `rank`'s collective `e` on these buffers (either may be null) runs on the
  // device: its input kept by keep(), its result made by collective_result. Every rank of one
  // collective must answer the same (a job error otherwise). Host collectives by default.
  [[nodiscard]] virtual bool collective_on_device(const Envelope& /*e*/, int /*rank*/, const void* /*input*/,
                                                  const void* /*output*/) const {
    return false;
  }
  // Rank `rank`'s result of device collective `e` into `output`, from every rank's kept input in
  // rank order (null where a rank had none, as a broadcast's non-roots); `last`: the last rank to
  // read them, after which they may go.
  virtual void collective_result(const Envelope& e, int rank, void* output, std::span<KeptMessage* const> inputs,
                                 bool last);
};

// A MessageCopy of one copy function (`reads_device`: whether it handles device memory).
using CopyFunction = void (*)(void* dst, const void* src, std::size_t bytes);
[[nodiscard]] std::shared_ptr<MessageCopy> function_message_copy(CopyFunction copy, bool reads_device);
void host_message_copy(void* dst, const void* src, std::size_t bytes);

class LoopbackCommunicator : public Communicator {
 public:
  LoopbackCommunicator(std::shared_ptr<LoopbackHub> hub, int rank, CommOptions options);
  ~LoopbackCommunicator() override;

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override;
  // Every rank of the job is on this machine: local rank = rank.
  [[nodiscard]] int local_rank() const override { return rank_; }
  [[nodiscard]] int local_size() const override { return size(); }
  // True when the job's copy is not the host memcpy (the device copy of --loopback --device cuda).
  [[nodiscard]] bool reads_device_memory() const override;
  [[nodiscard]] bool reduces_bf16() const override { return true; }
  // This rank's device work is queued on `stream`: its messages are ordered by events on it.
  void use_device_stream(void* stream) override;

  // This rank's communicator in a job of `members` alone (ranks of this job, increasing, this
  // rank among them): its own mailboxes and meeting points, moving bytes with `copy` (null: the
  // host memcpy). A tensor-parallel or ZeRO group of a --loopback --device cuda job gets its
  // collectives on the device so, where a SubgroupCommunicator would reduce on the host; a new
  // copy, because a copy knows the ranks of its job by their index (a stream each).
  // Every member asks for the same groups in the same order; the first to ask for the k-th job
  // of a list makes every member's communicator with its `copy`, and each member takes its own
  // (nothing waits: the job's collectives meet later). Throws burst::Error for a bad list
  // (checked_members, subgroup_communicator.hpp).
  [[nodiscard]] std::unique_ptr<Communicator> subjob(std::vector<int> members, std::shared_ptr<MessageCopy> copy);
  // The device collectives of a group of this job (TrainingOptions::device_collectives): none
  // (null) where `group` moves device memory itself (this job, when its copy does), else this
  // rank's subjob of `members` (the group's ranks, all of the job's included) with `copy`.
  [[nodiscard]] std::unique_ptr<Communicator> group_transport(const Communicator& group, std::span<const int> members,
                                                              std::shared_ptr<MessageCopy> copy);

 protected:
  std::unique_ptr<Request::State> post_send(ConstBuffer data, const Envelope& e) override;
  std::unique_ptr<Request::State> post_recv(MutBuffer data, const Envelope& e) override;
  std::unique_ptr<Request::State> post_barrier() override;
  std::unique_ptr<Request::State> post_allreduce(MutBuffer data, const Envelope& e) override;
  std::unique_ptr<Request::State> post_allgather(ConstBuffer mine, MutBuffer all, const Envelope& e) override;
  std::unique_ptr<Request::State> post_reduce_scatter(ConstBuffer all, MutBuffer mine, const Envelope& e) override;
  std::unique_ptr<Request::State> post_gather(ConstBuffer mine, MutBuffer all, const Envelope& e) override;
  std::unique_ptr<Request::State> post_broadcast(MutBuffer data, int root, const Envelope& e) override;
  bool test(Request::State& state, const Envelope& e) override;
  void abort_backend(int) const override {}  // the process is the job: abort_all's exit ends it

 private:
  std::unique_ptr<Request::State> meet(const Envelope& e, ConstBuffer input, MutBuffer output, int root);

  std::shared_ptr<LoopbackHub> hub_;
  int rank_;
  std::uint64_t collectives_ = 0;                  // this rank's collectives so far: the next one's meeting point
  std::map<std::vector<int>, int> subjobs_asked_;  // by member list: how many this rank has taken
};

// The shared mailboxes of a `ranks`-rank job, for building its communicators one by one
// (a test's communicator that records what it posts derives from LoopbackCommunicator).
// Throws burst::Error for ranks < 1.
[[nodiscard]] std::shared_ptr<LoopbackHub> make_loopback_hub(int ranks, std::shared_ptr<MessageCopy> copy = nullptr);

// The communicators of a `ranks`-rank job in this process, indexed by rank; each is driven by
// its own thread. Throws burst::Error for ranks < 1.
// `copy` null: the host memcpy.
[[nodiscard]] std::vector<std::unique_ptr<Communicator>> make_loopback_communicators(
    int ranks, CommOptions options = {}, std::shared_ptr<MessageCopy> copy = nullptr);
// The same with one copy function that handles device memory (the tests' stand-ins for a GPU transport).
[[nodiscard]] std::vector<std::unique_ptr<Communicator>> make_loopback_communicators(int ranks, CommOptions options,
                                                                                     CopyFunction device_copy);

// A one-rank job: sends to self are received, collectives are identities.
[[nodiscard]] std::unique_ptr<Communicator> make_self_communicator(CommOptions options = {});

}  // namespace burst::rt
