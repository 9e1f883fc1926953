// The error messages of the communicators, in one place so every backend says the same thing.
//
// Each names this rank (where), then what happened with the peer, the channel, the step and
// the direction:
//   "rank 2: no message from rank 1 on the q ring at step 3 within 60 s (hint: ...)"
//   "rank 0: message to rank 1 on the kv ring at step 0 not received within 60 s (hint: ...)"
//   "rank 1: allreduce did not complete within 60 s (hint: ...)"
//   "rank 3: message from rank 2 on the dq ring at step 4 has 192 bytes (valid: 256 bytes, ...)"
#pragma once

#include <cstddef>
#include <string>

#include "common/error.hpp"
#include "runtime/comm/communicator.hpp"

namespace burst::rt {

// "message from rank 1 on the q ring at step 3" (a receive), "message to rank 2 ..." (a send),
// or the collective's name.
std::string describe(const Envelope& e);

Error timeout_error(int rank, const Envelope& e, double timeout_s);
Error size_mismatch_error(int rank, const Envelope& e, std::size_t received_bytes);
// A failure the backend reported (an MPI error string, say).
Error backend_error(int rank, const Envelope& e, const std::string& backend_message);

}  // namespace burst::rt
