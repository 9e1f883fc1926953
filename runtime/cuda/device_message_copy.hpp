// The GPU loopback's message copy (runtime/comm/loopback_communicator.hpp): every rank of a
// `burst run --loopback --device cuda` job is a thread driving the same GPU on a stream of its
// own, and their messages are device-to-device copies ordered by CUDA events on those streams,
// so a P-rank ring on one GPU costs its kernels plus its copies, and the host never waits:
//
//   receive       the receiver's stream records event A where it posts a receive (its buffer exists)
//   deliver       the sender's stream waits for A and copies (after everything it queued before
//                 the send, the block's writes included) and records B; the receiver's stream
//                 waits for B, so its later work reads the block. The sender's own later work (a
//                 reuse or a stream-ordered free of the block) follows the copy on its stream, and
//                 neither stream waits for the other's backlog
//   keep          a message sent before its receive is posted: copied on the sender's stream into
//                 staging from a pool of the sender's own (threshold at its maximum, trimmed and
//                 retried when the device runs out, as DeviceKernelMemory's), event A after it
//   deliver_kept  the receiver's stream waits for A and copies out; the staging is freed on the
//                 sender's stream after an event of that copy
//
// Collectives on device buffers (fp32 sums: ZeRO's gradient all-reduce and reduce-scatter;
// copies: its parameter all-gathers, broadcasts) run on the device too: each rank's input is
// kept as above, each rank makes its own result on its own stream after every input's event (the
// sum in rank order, as the host's, with the element kernels' accumulate), records an event after
// its reads, and the last rank to read has each input freed on its owner's stream after all those
// events.
//
// A rank says which stream it queues on with Communicator::use_device_stream (burst run does, once
// the rank's kernels exist). Until both ranks of a message have, and for host buffers and the
// other collectives (whose meeting point keeps host copies), the copy is the synchronous one: the
// device synchronised before it (the writers are done) and after it (the readers see it), which
// is correct for any stream and counted as two device-wide synchronisations (device_traffic.hpp).
//
// Not verified on a GPU.
#pragma once

#include <memory>

#include "runtime/comm/loopback_communicator.hpp"

namespace burst::rt::gpu {

[[nodiscard]] std::shared_ptr<MessageCopy> make_device_message_copy();

}  // namespace burst::rt::gpu
