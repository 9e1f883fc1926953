// A loopback rank that checks its traffic against the NCCL op lists as the NCCL backend would
// group it: the CPU tests' stand-in for the NCCL transport (runtime/cuda/nccl_communicator.hpp).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime/comm/comm_errors.hpp"
#include "runtime/comm/loopback_communicator.hpp"
#include "runtime/schedule/nccl_group_assembler.hpp"
#include "runtime/schedule/nccl_op_list.hpp"

namespace burst::test {

// One rank of an in-process job that records every send and receive it is asked to post, in
// order, and then posts it as the loopback backend does. Beside, it assembles the transfers into
// the rank's NCCL groups as the NCCL backend would (NcclGroupAssembler, which throws on a
// transfer outside the op list), and notes every wait on a transfer whose group is not ready
// yet: under NCCL that group would never have been issued, and the wait would hang.
class RecordingCommunicator final : public rt::LoopbackCommunicator {
 public:
  RecordingCommunicator(std::shared_ptr<rt::LoopbackHub> hub, int rank, const rt::NcclOpLists& lists)
      : LoopbackCommunicator(std::move(hub), rank, rt::CommOptions{10}),
        assembler_(rank, lists.of(rank, rt::NcclPhase::Forward), lists.of(rank, rt::NcclPhase::Backward)),
        groups_{lists.of(rank, rt::NcclPhase::Forward).size(), lists.of(rank, rt::NcclPhase::Backward).size()} {}
  [[nodiscard]] const std::vector<rt::Envelope>& posted() const { return posted_; }
  [[nodiscard]] const std::vector<std::string>& early_waits() const { return early_waits_; }
  [[nodiscard]] const rt::NcclGroupAssembler& assembler() const { return assembler_; }

  // Whether every group of the pass begun last was issued (a pass left short would hang NCCL).
  [[nodiscard]] bool last_pass_issued() const {
    const std::size_t groups = groups_[static_cast<std::size_t>(last_pass_)];
    return groups == 0 || assembler_.ready(groups - 1);
  }

  void begin_pass(rt::AttentionPass pass) override {
    assembler_.begin(pass);
    last_pass_ = pass;
  }

 protected:
  struct Tracked final : rt::Request::State {
    Tracked(std::unique_ptr<rt::Request::State> inner_, std::size_t group_) : inner(std::move(inner_)), group(group_) {}
    std::unique_ptr<rt::Request::State> inner;  // the loopback's (none for an eager send)
    std::size_t group;
  };

  std::unique_ptr<rt::Request::State> post_send(rt::ConstBuffer data, const rt::Envelope& e) override {
    posted_.push_back(e);
    const std::size_t group = assembler_.post(e).group;
    return std::make_unique<Tracked>(LoopbackCommunicator::post_send(data, e), group);
  }
  std::unique_ptr<rt::Request::State> post_recv(rt::MutBuffer data, const rt::Envelope& e) override {
    posted_.push_back(e);
    const std::size_t group = assembler_.post(e).group;
    return std::make_unique<Tracked>(LoopbackCommunicator::post_recv(data, e), group);
  }
  bool test(rt::Request::State& state, const rt::Envelope& e) override {
    auto* tracked = dynamic_cast<Tracked*>(&state);
    if (tracked == nullptr) return LoopbackCommunicator::test(state, e);
    if (!assembler_.ready(tracked->group)) {
      early_waits_.push_back(fmt::format("{}: {}", rt::describe(e), assembler_.incomplete(tracked->group)));
    }
    return tracked->inner == nullptr || LoopbackCommunicator::test(*tracked->inner, e);
  }

 private:
  rt::NcclGroupAssembler assembler_;
  std::array<std::size_t, 2> groups_;  // of the forward and the backward list
  rt::AttentionPass last_pass_ = rt::AttentionPass::Forward;
  std::vector<rt::Envelope> posted_;
  std::vector<std::string> early_waits_;
};

}  // namespace burst::test
