// The one-rank communicator (self_communicator.hpp): a mailbox of unclaimed messages per tag
// and the list of receives still waiting, both in posting order, as MPI matches.
#include "runtime/comm/self_communicator.hpp"

#include <algorithm>
#include <cstring>
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
  ReceiveState(SelfCommunicator& owner_, long long tag_, MutBuffer destination_)
      : owner(owner_), tag(tag_), destination(destination_) {}
  ReceiveState(const ReceiveState&) = delete;
  ReceiveState& operator=(const ReceiveState&) = delete;
  ~ReceiveState() override;

  void deliver(std::span<const std::byte> payload) {
    received = payload.size();
    if (received == destination.bytes()) std::copy(payload.begin(), payload.end(), static_cast<std::byte*>(destination.data));
    delivered = true;
  }

  SelfCommunicator& owner;
  long long tag;
  MutBuffer destination;
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
  std::unique_ptr<Request::State> post_send(ConstBuffer buffer, const Envelope& e) override {
    const std::span<const std::byte> data(static_cast<const std::byte*>(buffer.data), buffer.bytes());
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

  std::unique_ptr<Request::State> post_recv(MutBuffer data, const Envelope& e) override {
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

  // With one rank every collective's result is this rank's input.
  std::unique_ptr<Request::State> post_barrier() override { return nullptr; }
  std::unique_ptr<Request::State> post_allreduce(MutBuffer, const Envelope&) override { return nullptr; }
  std::unique_ptr<Request::State> post_allgather(ConstBuffer mine, MutBuffer all, const Envelope&) override {
    return copy(mine, all);
  }
  std::unique_ptr<Request::State> post_reduce_scatter(ConstBuffer all, MutBuffer mine, const Envelope&) override {
    return copy(all, mine);
  }
  std::unique_ptr<Request::State> post_gather(ConstBuffer mine, MutBuffer all, const Envelope&) override {
    return copy(mine, all);
  }
  std::unique_ptr<Request::State> post_broadcast(MutBuffer, int, const Envelope&) override { return nullptr; }

  bool test(Request::State& state, const Envelope& e) override {
    const auto& receive = static_cast<const ReceiveState&>(state);
    if (!receive.delivered) return false;
    if (receive.received != e.bytes()) throw size_mismatch_error(0, e, receive.received);
    return true;
  }

 private:
  static std::unique_ptr<Request::State> copy(ConstBuffer from, MutBuffer to) {
    if (from.data != to.data) std::memmove(to.data, from.data, from.bytes());
    return nullptr;
  }

  std::map<long long, std::deque<std::vector<std::byte>>> mailbox_;
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
