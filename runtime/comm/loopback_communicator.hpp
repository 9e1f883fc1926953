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
// Point-to-point payloads are copied by the job's MessageCopy: memcpy for host buffers, or
// (--loopback --device cuda, every rank a thread driving the same GPU) a copy that also moves
// device memory (runtime/device: cudaMemcpy with cudaMemcpyDefault), so the ring's device-
// resident blocks go GPU to GPU, or through a host copy in the mailbox when the receive is
// posted after the send. Collectives go through the same copy: their inputs into host copies at
// the meeting point, their results out, so ZeRO's collectives on a GPU-resident model state
// work on the GPU loopback too (reads_device_memory).
//
// The process is the whole job, so aborting the job is exiting the process (abort_all).
// Thread safety: one thread per communicator; the communicators of one job share their
// mailboxes under one mutex.
#pragma once

#include <memory>
#include <vector>

#include "runtime/comm/communicator.hpp"

namespace burst::rt {

class LoopbackHub;  // the mailboxes and meeting points of one job (loopback_communicator.cpp)

// Copies `bytes` from `src` to `dst`, each host or (for a copy that supports it) device memory.
using MessageCopy = void (*)(void* dst, const void* src, std::size_t bytes);
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
  std::uint64_t collectives_ = 0;  // this rank's collectives so far: the next one's meeting point
};

// The shared mailboxes of a `ranks`-rank job, for building its communicators one by one
// (a test's communicator that records what it posts derives from LoopbackCommunicator).
// Throws burst::Error for ranks < 1.
[[nodiscard]] std::shared_ptr<LoopbackHub> make_loopback_hub(int ranks, MessageCopy copy = host_message_copy);

// The communicators of a `ranks`-rank job in this process, indexed by rank; each is driven by
// its own thread. Throws burst::Error for ranks < 1.
[[nodiscard]] std::vector<std::unique_ptr<Communicator>> make_loopback_communicators(int ranks, CommOptions options = {},
                                                                                    MessageCopy copy = host_message_copy);

// A one-rank job: sends to self are received, collectives are identities.
[[nodiscard]] std::unique_ptr<Communicator> make_self_communicator(CommOptions options = {});

}  // namespace burst::rt
