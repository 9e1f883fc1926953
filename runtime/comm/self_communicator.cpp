// The one-rank communicator (self_communicator.hpp): a mailbox of unclaimed messages per tag
// and the list of receives still waiting, both in posting order, as MPI matches.
#include "runtime/comm/self_communicator.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <vector>

#include "runtime/comm/comm_errors.hpp"
#include "runtime/comm/tag.hpp"

namespace burst::rt {
namespace {

class SelfCommunicator;

// A posted receive. Until a message arrives it is listed in its communicator; destroying it
// then (a cancel) takes it off the list.
struct ReceiveState final : Request::State {
  ReceiveState(SelfCommunicator& owner_, long long tag_, std::span<float> destination_)
      : owner(owner_), tag(tag_), destination(destination_) {}
  ReceiveState(const ReceiveState&) = delete;
  ReceiveState& operator=(const ReceiveState&) = delete;
  ~ReceiveState() override;

  void deliver(std::span<const float> payload) {
    received = payload.size();
    if (received == destination.size()) std::copy(payload.begin(), payload.end(), destination.begin());
    delivered = true;
  }

  SelfCommunicator& owner;
  long long tag;
  std::span<float> destination;
  bool delivered = false;
  std::size_t received = 0;
};

class SelfCommunicator final : public Communicator {
 public:
  using Communicator::Communicator;

  [[nodiscard]] int rank() const override { return 0; }
  [[nodiscard]] int size() const override { return 1; }
  void abort_backend(int) const override {}  // one process is the whole job

  void forget(const ReceiveState* receive) { std::erase(waiting_, receive); }

 protected:
  std::unique_ptr<Request::State> post_send(std::span<const float> data, const Envelope& e) override {
    const long long tag = message_tag(e.channel, e.step, e.level);
    const auto match = std::find_if(waiting_.begin(), waiting_.end(), [&](auto* r) { return r->tag == tag; });
    if (match != waiting_.end()) {
      (*match)->deliver(data);
      waiting_.erase(match);
    } else {
      mailbox_[tag].emplace_back(data.begin(), data.end());
    }
    return nullptr;
  }

  std::unique_ptr<Request::State> post_recv(std::span<float> data, const Envelope& e) override {
    auto receive = std::make_unique<ReceiveState>(*this, message_tag(e.channel, e.step, e.level), data);
    const auto box = mailbox_.find(receive->tag);
    if (box != mailbox_.end()) {
      receive->deliver(box->second.front());
      box->second.pop_front();
      if (box->second.empty()) mailbox_.erase(box);
    } else {
      waiting_.push_back(receive.get());
    }
    return receive;
  }

  std::unique_ptr<Request::State> post_barrier() override { return nullptr; }
  std::unique_ptr<Request::State> post_allreduce_sum(std::span<float>) override { return nullptr; }
  std::unique_ptr<Request::State> post_gather(std::span<const float> mine, std::span<float> all) override {
    std::copy(mine.begin(), mine.end(), all.begin());
    return nullptr;
  }

  bool test(Request::State& state, const Envelope& e) override {
    const auto& receive = static_cast<const ReceiveState&>(state);
    if (!receive.delivered) return false;
    if (receive.received != e.count) throw size_mismatch_error(0, e, receive.received);
    return true;
  }

 private:
  std::map<long long, std::deque<std::vector<float>>> mailbox_;
  std::vector<ReceiveState*> waiting_;
};

ReceiveState::~ReceiveState() {
  if (!delivered) owner.forget(this);
}

}  // namespace

std::unique_ptr<Communicator> make_self_communicator(CommOptions options) {
  return std::make_unique<SelfCommunicator>(options);
}

}  // namespace burst::rt
