// The ring's transfers over NCCL, between the GPUs of an mpirun job.
//
// What it does. Each transfer the executor posts (isend / irecv, as with MPI) is matched to its
// op in the rank's NCCL op list by the group assembler (schedule/nccl_group_assembler.hpp,
// whose logic the CPU tests run against the real executor); once a group of the list is whole
// it is issued at once, ncclGroupStart / ncclSend, ncclRecv ... / ncclGroupEnd, on the stream
// of its communicator, and an event is recorded after it. A wait polls that event and
// ncclCommGetAsyncError (never a blocking synchronise), so it times out like every other
// backend and names the rank, peer, channel and step; a timed-out or failed transfer cannot be
// withdrawn from NCCL, so the communicators are aborted (ncclCommAbort) and the job with them.
//
// Communicators. One per ring and level the plan's lists use (read and accumulator rings, flat
// or intra and inter, the Ulysses group), split from one made with rank 0's unique id
// (nccl_bootstrap.hpp), each with its own stream: NCCL runs the groups of one communicator one
// after another, so rings that must be in flight together need one each. Every rank splits the
// same ones, in the same order (the union over all ranks' lists). They are non-blocking, so
// every NCCL call (init, split, group end, finalize) is polled against the timeout, and
// NCCL_LAUNCH_ORDER_IMPLICIT orders their kernels as the host issues them (NCCL >= 2.26). A
// warm-up exchange with every peer, both directions in one group, opens NCCL's lazy
// connections before anything is timed. Any failure aborts every communicator, for good.
//
// Memory. The ring's blocks are device memory (the executor keeps them in the CUDA kernels'
// DeviceKernelMemory, every write to them complete before a send is posted), and NCCL sends and
// receives them in place. A host buffer (the Ulysses all-to-all's) is copied to device staging
// on its communicator's stream before its group, and a receive back once its group's event has
// fired; staging buffers are pooled by size. cudaPointerGetAttributes tells the two apart.
// Collectives (the run's barriers, verdicts and reports: small host values) go over the job's
// own communicator.
//
// Not verified on a GPU: this file compiles in CI (nvcc, NCCL 2.28 headers) and its grouping
// logic is CPU-tested, but no NCCL transfer has run yet (docs/runtime-cuda.md).
#pragma once

#include <memory>

#include "runtime/comm/communicator.hpp"
#include "runtime/schedule/nccl_op_list.hpp"

namespace burst::rt::gpu {

// Collective over `job` (it broadcasts the unique id and every rank splits the same
// communicators). `device`: this rank's GPU. `producer`: the stream (a cudaStream_t) the
// blocks' writers are queued on; each group's stream waits for what it holds when the group is
// issued (an event, no host wait). `job` must outlive the result. Throws burst::Error with
// NCCL's or CUDA's message when a call fails.
[[nodiscard]] std::unique_ptr<Communicator> make_nccl_communicator(Communicator& job, const NcclOpLists& lists,
                                                                   int device, void* producer);

}  // namespace burst::rt::gpu
