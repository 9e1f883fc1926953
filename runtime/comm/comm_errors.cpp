#include "runtime/comm/comm_errors.hpp"

#include <fmt/format.h>

namespace burst::rt {
namespace {

std::string where(int rank) { return fmt::format("rank {}", rank); }

std::string_view collective_name(Operation op) {
  switch (op) {
    case Operation::Barrier: return "barrier";
    case Operation::Allreduce: return "allreduce";
    case Operation::Allgather: return "allgather";
    case Operation::ReduceScatter: return "reduce_scatter";
    case Operation::GatherToRoot: return "gather_to_root";
    case Operation::Broadcast: return "broadcast";
    case Operation::Send:
    case Operation::Recv: break;
  }
  return "point-to-point";
}

}  // namespace

std::string describe(const Envelope& e) {
  switch (e.operation) {
    case Operation::Send:
      return fmt::format("message to rank {} on the {} at step {}", e.peer, to_string(e.channel), e.step);
    case Operation::Recv:
      return fmt::format("message from rank {} on the {} at step {}", e.peer, to_string(e.channel), e.step);
    default: break;
  }
  return std::string(collective_name(e.operation));
}

Error timeout_error(int rank, const Envelope& e, double timeout_s) {
  switch (e.operation) {
    case Operation::Recv:
      return Error(Problem{where(rank),
                           fmt::format("no message from rank {} on the {} at step {} within {} s", e.peer,
                                       to_string(e.channel), e.step, timeout_s),
                           "",
                           fmt::format("rank {} failed, is stuck, or never sends on this channel, step and "
                                       "ring level ({}); a rank that is only slow needs a longer "
                                       "CommOptions::timeout_s",
                                       e.peer, to_string(e.level))});
    case Operation::Send:
      return Error(Problem{where(rank), fmt::format("{} not received within {} s", describe(e), timeout_s), "",
                           fmt::format("rank {} failed, is stuck, or never posts the matching receive "
                                       "(ring level {})",
                                       e.peer, to_string(e.level))});
    default: break;
  }
  return Error(Problem{where(rank), fmt::format("{} did not complete within {} s", describe(e), timeout_s), "",
                       "some rank failed, is stuck, or calls the collectives in another order"});
}

Error size_mismatch_error(int rank, const Envelope& e, std::size_t received_bytes) {
  return Error(
      Problem{where(rank), fmt::format("{} has {} bytes", describe(e), received_bytes),
              fmt::format("{} bytes, the posted receive's {} {} elements", e.bytes(), e.count, to_string(e.dtype)),
              "both sides of a ring transfer must agree on the block shape"});
}

Error backend_error(int rank, const Envelope& e, const std::string& backend_message) {
  return Error(Problem{where(rank), fmt::format("{} failed: {}", describe(e), backend_message), "", ""});
}

}  // namespace burst::rt
