// Matching posted transfers to the op list's groups (nccl_group_assembler.hpp).
#include "runtime/schedule/nccl_group_assembler.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/comm/comm_errors.hpp"

namespace burst::rt {
namespace {

std::string_view pass_name(AttentionPass pass) { return pass == AttentionPass::Forward ? "forward" : "backward"; }

bool same_transfer(const NcclOp& op, RingLevel level, const Envelope& e, RingLevel e_level) {
  const bool send = e.operation == Operation::Send;
  return (op.direction == NcclDirection::Send) == send && op.peer == e.peer && op.channel == e.channel &&
         op.envelope_step == e.step && level == e_level;
}

}  // namespace

NcclGroupAssembler::NcclGroupAssembler(int rank, NcclOpList forward, NcclOpList backward)
    : rank_(rank), forward_(std::move(forward)), backward_(std::move(backward)) {}

void NcclGroupAssembler::begin(AttentionPass pass) {
  if (started_ && ready_ < list().size()) {
    throw Error(Problem{fmt::format("rank {}: NCCL {} pass", rank_, pass_name(pass_)),
                        fmt::format("a {} pass begins while {}", pass_name(pass), incomplete(ready_)),
                        "every transfer of a pass posted before the next pass",
                        "the executor and its op list (runtime/schedule/nccl_op_list.hpp) disagree"});
  }
  started_ = true;
  pass_ = pass;
  posted_.clear();
  missing_.clear();
  for (const NcclGroup& g : list()) {
    posted_.emplace_back(g.ops.size(), false);
    missing_.push_back(g.ops.size());
  }
  ready_ = reported_ = 0;
  while (ready_ < missing_.size() && missing_[ready_] == 0) ++ready_;
}

NcclGroupAssembler::Slot NcclGroupAssembler::post(const Envelope& e) {
  const NcclOpList& groups = list();
  for (std::size_t g = ready_; g < groups.size(); ++g) {
    for (std::size_t o = 0; o < groups[g].ops.size(); ++o) {
      const NcclOp& op = groups[g].ops[o];
      if (posted_[g][o] || !same_transfer(op, groups[g].comm.level, e, e.level)) continue;
      if (op.bytes != e.bytes()) {
        throw Error(Problem{fmt::format("rank {}: NCCL {} pass: {}", rank_, pass_name(pass_), describe(e)),
                            fmt::format("{} bytes", e.bytes()), fmt::format("{} bytes, as the op list says", op.bytes),
                            "the executor and its op list disagree"});
      }
      posted_[g][o] = true;
      --missing_[g];
      while (ready_ < missing_.size() && missing_[ready_] == 0) ++ready_;
      return {g, o};
    }
  }
  throw Error(Problem{fmt::format("rank {}: NCCL {} pass: {}", rank_, pass_name(pass_), describe(e)),
                      "not in this rank's op list (or posted twice)", "the transfers of the plan's op list",
                      "the executor and its op list (runtime/schedule/nccl_op_list.hpp) disagree"});
}

std::vector<std::size_t> NcclGroupAssembler::take_ready() {
  std::vector<std::size_t> out;
  for (; reported_ < ready_; ++reported_) out.push_back(reported_);
  return out;
}

std::string NcclGroupAssembler::incomplete(std::size_t g) const {
  const NcclGroup& group = list().at(g);
  std::string missing;
  for (std::size_t o = 0; o < group.ops.size(); ++o) {
    if (posted_[g][o]) continue;
    const NcclOp& op = group.ops[o];
    missing += fmt::format("{}{} {} {} rank {}", missing.empty() ? "" : ", ",
                           op.direction == NcclDirection::Send ? "send" : "recv", describe_payload(op),
                           op.direction == NcclDirection::Send ? "to" : "from", op.peer);
  }
  if (missing.empty()) {
    for (std::size_t before = ready_; before < g; ++before) {
      if (missing_[before] > 0) {
        return fmt::format("the {} group at step {} waits for an earlier one: {}", to_string(group.comm), group.step,
                           incomplete(before));
      }
    }
    return fmt::format("the {} group at step {} is complete", to_string(group.comm), group.step);
  }
  return fmt::format("the {} group at step {} still misses: {}", to_string(group.comm), group.step, missing);
}

}  // namespace burst::rt
