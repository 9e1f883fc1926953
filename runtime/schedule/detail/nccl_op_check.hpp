// Checking the NCCL op lists of every rank of a job at once, on the CPU: would NCCL pair every
// operation, finish every group, and send only data that has arrived? A GPU job that breaks
// any of these hangs or computes garbage without an error, so the lists are proven first.
//
// (a) Pairing. NCCL matches by posting order: on each communicator, the k-th send from rank a
//     to rank b meets the k-th receive at b from a. Every such pair must exist and agree in
//     bytes and dtype (or NCCL fails or truncates) and in payload, channel and block (or the
//     data lands in the wrong buffer, silently); an unmatched send or receive is named with its
//     group and payload.
// (b) Progress. Each rank issues its groups in list order from one host thread; a group
//     completes once every partner of its operations has been posted, that is, once each
//     partner's rank has reached the group holding it. The model runs each rank's groups one
//     at a time (the strictest order NCCL may impose: NCCL_LAUNCH_ORDER_IMPLICIT serialises a
//     device's groups across communicators where the driver cannot overlap them, and a
//     communicator always runs one group at a time). Where NCCL overlaps more, groups only
//     start earlier, so lists that finish here finish there. Groups on two communicators
//     issued in opposite orders by two ranks, or a send posted after the receive it waits for
//     on the same rank, leave ranks waiting; the simulation runs until nothing moves and names
//     each waiting rank, the group and step it waits in, and the peer it waits for and where
//     that peer is stuck. Run only when every operation has a partner (an unpaired one never
//     completes).
// (c) Data. A send marked `forwards` passes on data the rank received (a block travelling on, an
//     accumulator with the rank's share added): some earlier group must receive the same
//     payload (channel and block). The same group is a bug too: NCCL gives no order inside a
//     group, so the send could leave before the receive lands.
//
// Problems come back one line each, at most 20 per kind with a count of the rest; empty means
// the lists are sound.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "runtime/schedule/nccl_op_list.hpp"

namespace burst::rt {

// `lists[r]` is world rank r's list (the ranks of one job, one phase or several phases back to back).
[[nodiscard]] std::vector<std::string> check_nccl_op_lists(std::span<const NcclOpList> lists);

}  // namespace burst::rt
