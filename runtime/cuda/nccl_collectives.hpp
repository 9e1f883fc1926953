// ZeRO's collectives on GPU memory over NCCL: the gradients' reduce-scatter (or all-reduce)
// and the parameters' all-gather, when the model state lives on the GPUs of an mpirun job.
//
// What it does. One NCCL communicator over every rank of the job (rank 0's unique id,
// nccl_bootstrap.hpp), with a stream of its own, runs each collective on the buffers in place:
//   allreduce -> ncclAllReduce, allgather -> ncclAllGather, reduce_scatter -> ncclReduceScatter,
//   broadcast -> ncclBroadcast (ReduceOp Sum -> ncclSum, Max -> ncclMax);
//   barrier -> a one-element ncclAllReduce on a small device buffer of its own;
//   gather_to_root -> one group: every rank's ncclSend to rank 0, rank 0's ncclRecv from each
//   (its own block a device-to-device copy).
// Why: copying a model's gradients to the host for MPI and its parameters back costs two trips
// over PCIe per step; NCCL moves them GPU to GPU (NVLink, GPUDirect RDMA) instead.
//
// Ordering with `producer`, the stream the buffers' writers (kernels, copies) are queued on.
// Before each collective an event is recorded on `producer` and the collective's stream waits
// for it (cudaStreamWaitEvent): the collective reads what every earlier write left, and the
// host never synchronises for its inputs. After it, an event on the collective's stream says
// when it is done; a wait polls that event and ncclCommGetAsyncError (nccl_wait.hpp), never a
// blocking synchronise, so it times out after CommOptions::timeout_s like every backend. A
// waited collective is complete (the Communicator contract): the host saw its event fire, so
// what is queued on `producer` after the wait reads the result. The barrier waits for
// `producer` too, so once it returns every rank's earlier GPU work is done.
//
// Failures. The communicator is non-blocking and every NCCL call is polled against the
// timeout; a call that fails or a collective that fails or times out aborts it for good
// (ncclCommAbort: NCCL cannot withdraw a collective) and throws burst::Error naming the rank,
// the operation and what NCCL said. Host memory is refused before anything is issued
// ("NCCL collectives: allreduce got host memory; ..."), and so are point-to-point transfers
// (isend, irecv and all_to_all): those go over the ring's communicator (nccl_communicator.hpp).
// Both may be in flight on one GPU at once; NCCL_LAUNCH_ORDER_IMPLICIT, set here as there, runs
// their kernels in the order the host issued them, the same on every rank, so neither waits on
// the other for ever.
//
// Not verified on a GPU: this file compiles in CI (nvcc, NCCL 2.28 headers), but no collective
// of it has run yet.
#pragma once

#include <memory>

#include "runtime/comm/communicator.hpp"

namespace burst::rt::gpu {

// Collective over `job`: every rank makes its own at the same point. `device`: this rank's GPU.
// `producer`: the cudaStream_t (as void*) the buffers' writers are queued on; nullptr is the
// legacy default stream. Collectives take device memory (fp32, fp64, bf16, the integers and
// bytes; reductions as Communicator allows). rank, size and the local ones are `job`'s, and
// `job` must outlive the result. Throws burst::Error with NCCL's or CUDA's message when a call
// fails.
[[nodiscard]] std::unique_ptr<Communicator> make_nccl_collectives(Communicator& job, int device, void* producer);

}  // namespace burst::rt::gpu
