// The in-process job (loopback_communicator.hpp): one hub of mailboxes, waiting receives and
// collective meeting points under one mutex, shared by the job's communicators.
#include "runtime/comm/loopback_communicator.hpp"

#include <algorithm>
#include <compare>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <span>
#include <string>

#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/comm/comm_errors.hpp"
#include "runtime/comm/detail/reduce_in_order.hpp"
#include "runtime/comm/detail/tag.hpp"
#include "runtime/comm/subgroup_communicator.hpp"

namespace burst::rt {
namespace {

// out[i] = op over ranks r (in rank order) of inputs[r][offset + i], for i < count
// (detail/reduce_in_order.hpp), written through the job's copy.
void reduce(DType dtype, ReduceOp op, const std::vector<std::vector<std::byte>>& inputs, std::size_t offset,
            std::size_t count, void* out, MessageCopy& copy) {
  if (count == 0) return;
  const std::size_t element = dtype_size(dtype);
  std::vector<const std::byte*> blocks;
  for (const std::vector<std::byte>& input : inputs) blocks.push_back(input.data() + offset * element);
  std::vector<std::byte> result(count * element);
  detail::reduce_in_order(dtype, op, blocks, count, result.data());
  copy.copy(out, result.data(), result.size());
}

// A message kept on the host.
struct HostKept final : KeptMessage {
  std::vector<std::byte> data;
};

// One copy function for every kind of copy.
class FunctionMessageCopy final : public MessageCopy {
 public:
  FunctionMessageCopy(CopyFunction function, bool reads_device) : copy_(function), reads_device_(reads_device) {}
  [[nodiscard]] bool reads_device_memory() const override { return reads_device_; }
  void copy(void* dst, const void* src, std::size_t bytes) override { copy_(dst, src, bytes); }

 private:
  CopyFunction copy_;
  bool reads_device_;
};

}  // namespace

std::unique_ptr<KeptMessage> MessageCopy::keep(const void* src, int, std::size_t bytes) {
  auto kept = std::make_unique<HostKept>();
  kept->bytes = bytes;
  kept->data.resize(bytes);
  if (bytes > 0) copy(kept->data.data(), src, bytes);
  return kept;
}

void MessageCopy::deliver_kept(void* dst, int, KeptMessage& message) {
  if (message.bytes > 0) copy(dst, static_cast<HostKept&>(message).data.data(), message.bytes);
}

void MessageCopy::collective_result(const Envelope& e, int, void*, std::span<KeptMessage* const>, bool) {
  throw Error(Problem{"loopback job", fmt::format("{} on the device", describe(e)), "host collectives",
                      "a MessageCopy that says collective_on_device must make the results"});
}

std::shared_ptr<MessageCopy> function_message_copy(CopyFunction copy, bool reads_device) {
  return std::make_shared<FunctionMessageCopy>(copy, reads_device);
}

// Who a message is for: receiver, sender, tag.
struct MessageKey {
  int to = 0, from = 0;
  long long tag = 0;
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 reads the defaulted <=>'s comparison with 0 as a null pointer
  friend auto operator<=>(const MessageKey&, const MessageKey&) = default;
};

// What one posted operation waits for; test() asks it under the hub's mutex.
struct LoopbackState : Request::State {
  // True once complete (the result is in place); throws burst::Error when it failed.
  virtual bool complete(int rank, const Envelope& e) = 0;
};

struct ReceiveState;

// The k-th collective of every rank.
struct MeetingPoint {
  Envelope call;  // the first arrival's: the others must make the same call
  int first_rank = 0;
  std::vector<std::vector<std::byte>> inputs;  // [rank]: a copy of each rank's input
  // On the device (MessageCopy::collective_on_device, the first arrival's answer, which every
  // rank must share): [rank] the copy's own copy of each rank's input instead.
  bool on_device = false;
  std::vector<std::unique_ptr<KeptMessage>> kept;
  int arrived = 0, left = 0;
  std::string conflict;  // set when some rank's call differs: every rank then fails
};

class LoopbackHub {
 public:
  LoopbackHub(int size, std::shared_ptr<MessageCopy> message_copy) : copy(std::move(message_copy)), size_(size) {}
  [[nodiscard]] int size() const { return size_; }

  const std::shared_ptr<MessageCopy> copy;  // payloads (see the header)

  std::mutex mutex;
  std::map<MessageKey, std::deque<std::unique_ptr<KeptMessage>>> mailbox;  // sent, not yet received
  std::map<MessageKey, std::deque<ReceiveState*>> waiting;                 // posted, not yet delivered
  std::map<std::uint64_t, MeetingPoint> meetings;
  // Sub-jobs made and not yet taken by every member, by (member list, k-th such list asked).
  std::map<std::pair<std::vector<int>, int>, std::vector<std::unique_ptr<Communicator>>> subjobs;

 private:
  int size_;
};

struct ReceiveState final : LoopbackState {
  ReceiveState(LoopbackHub& hub_, MessageKey key_, MutBuffer destination_)
      : hub(hub_), key(key_), destination(destination_) {}
  ReceiveState(const ReceiveState&) = delete;
  ReceiveState& operator=(const ReceiveState&) = delete;
  // A receive destroyed before its message came (a cancel) leaves the waiting list.
  ~ReceiveState() override {
    const std::lock_guard lock(hub.mutex);
    if (delivered) return;
    auto& queue = hub.waiting[key];
    std::erase(queue, this);
    if (queue.empty()) hub.waiting.erase(key);
  }

  // Under the hub's mutex: a message sent now, or one kept in the mailbox.
  void deliver(const void* payload, std::size_t bytes) {
    received = bytes;
    if (received == destination.bytes() && received > 0) {
      hub.copy->deliver(destination.data, key.to, payload, key.from, received, posted.get());
    }
    delivered = true;
  }
  void deliver(KeptMessage& message) {
    received = message.bytes;
    if (received == destination.bytes() && received > 0) hub.copy->deliver_kept(destination.data, key.to, message);
    delivered = true;
  }

  bool complete(int rank, const Envelope& e) override {
    if (!delivered) return false;
    if (received != e.bytes()) throw size_mismatch_error(rank, e, received);
    return true;
  }

  LoopbackHub& hub;
  MessageKey key;
  MutBuffer destination;
  std::unique_ptr<KeptMessage> posted;  // the copy's mark of when the receive was posted
  bool delivered = false;
  std::size_t received = 0;
};

struct CollectiveState final : LoopbackState {
  CollectiveState(LoopbackHub& hub_, std::uint64_t index_, MutBuffer output_)
      : hub(hub_), index(index_), output(output_) {}

  bool complete(int rank, const Envelope&) override {
    MeetingPoint& point = hub.meetings.at(index);
    if (!point.conflict.empty()) throw backend_error(rank, point.call, point.conflict);
    if (point.arrived < hub.size()) return false;
    const bool last = point.left + 1 == hub.size();
    if (point.on_device) {
      std::vector<KeptMessage*> inputs;
      for (const auto& k : point.kept) inputs.push_back(k.get());
      hub.copy->collective_result(point.call, rank, output.data, inputs, last);
    } else {
      write_result(point, rank);
    }
    ++point.left;
    if (last) hub.meetings.erase(index);
    return true;
  }

  void write_result(const MeetingPoint& point, int rank) const {
    const Envelope& c = point.call;
    auto* out = static_cast<std::byte*>(output.data);
    const std::size_t bytes = c.bytes();
    switch (c.operation) {
      case Operation::Allreduce: reduce(c.dtype, c.op, point.inputs, 0, c.count, out, *hub.copy); break;
      case Operation::ReduceScatter:
        reduce(c.dtype, c.op, point.inputs, static_cast<std::size_t>(rank) * c.count, c.count, out, *hub.copy);
        break;
      case Operation::GatherToRoot:
        if (rank != 0) break;
        [[fallthrough]];
      case Operation::Allgather:
        for (std::size_t r = 0; r < point.inputs.size() && bytes > 0; ++r)
          hub.copy->copy(out + r * bytes, point.inputs[r].data(), bytes);
        break;
      case Operation::Broadcast:
        if (rank != c.peer && bytes > 0)
          hub.copy->copy(out, point.inputs[static_cast<std::size_t>(c.peer)].data(), bytes);
        break;
      case Operation::Barrier:
      case Operation::Send:
      case Operation::Recv: break;
    }
  }

  LoopbackHub& hub;
  std::uint64_t index;
  MutBuffer output;
};

LoopbackCommunicator::LoopbackCommunicator(std::shared_ptr<LoopbackHub> hub, int rank, CommOptions options)
    : Communicator(options), hub_(std::move(hub)), rank_(rank) {}

LoopbackCommunicator::~LoopbackCommunicator() = default;

int LoopbackCommunicator::size() const { return hub_->size(); }

bool LoopbackCommunicator::reads_device_memory() const { return hub_->copy->reads_device_memory(); }

void LoopbackCommunicator::use_device_stream(void* stream) {
  const std::lock_guard lock(hub_->mutex);
  hub_->copy->use_stream(rank_, stream);
}

std::unique_ptr<Communicator> LoopbackCommunicator::subjob(std::vector<int> members,
                                                           std::shared_ptr<MessageCopy> copy) {
  members = checked_members(*this, std::move(members));
  const auto index = static_cast<std::size_t>(std::find(members.begin(), members.end(), rank_) - members.begin());
  const int k = subjobs_asked_[members]++;
  const std::lock_guard lock(hub_->mutex);
  auto [entry, first] = hub_->subjobs.try_emplace({members, k});
  if (first) entry->second = make_loopback_communicators(static_cast<int>(members.size()), options(), std::move(copy));
  std::unique_ptr<Communicator> mine = std::move(entry->second[index]);
  if (std::all_of(entry->second.begin(), entry->second.end(), [](const auto& c) { return c == nullptr; })) {
    hub_->subjobs.erase(entry);
  }
  return mine;
}

std::unique_ptr<Communicator> LoopbackCommunicator::group_transport(const Communicator& group,
                                                                    std::span<const int> members,
                                                                    std::shared_ptr<MessageCopy> copy) {
  if (group.reads_device_memory()) return nullptr;
  return subjob(std::vector<int>(members.begin(), members.end()), std::move(copy));
}

std::unique_ptr<Request::State> LoopbackCommunicator::post_send(ConstBuffer buffer, const Envelope& e) {
  const std::span<const std::byte> data(static_cast<const std::byte*>(buffer.data), buffer.bytes());
  const MessageKey key{e.peer, rank_, message_tag(e.channel, e.step, e.level)};
  const std::lock_guard lock(hub_->mutex);
  const auto waiting = hub_->waiting.find(key);
  if (waiting != hub_->waiting.end()) {
    waiting->second.front()->deliver(data.data(), data.size());
    waiting->second.pop_front();
    if (waiting->second.empty()) hub_->waiting.erase(waiting);
  } else {
    hub_->mailbox[key].push_back(hub_->copy->keep(data.data(), rank_, data.size()));
  }
  return nullptr;  // eager: the payload is copied (or its copy ordered before the sender reuses it)
}

std::unique_ptr<Request::State> LoopbackCommunicator::post_recv(MutBuffer data, const Envelope& e) {
  auto receive =
      std::make_unique<ReceiveState>(*hub_, MessageKey{rank_, e.peer, message_tag(e.channel, e.step, e.level)}, data);
  const std::lock_guard lock(hub_->mutex);
  const auto box = hub_->mailbox.find(receive->key);
  if (box != hub_->mailbox.end()) {
    receive->deliver(*box->second.front());
    box->second.pop_front();
    if (box->second.empty()) hub_->mailbox.erase(box);
  } else {
    receive->posted = hub_->copy->receive_posted(rank_);
    hub_->waiting[receive->key].push_back(receive.get());
  }
  return receive;
}

std::unique_ptr<Request::State> LoopbackCommunicator::meet(const Envelope& e, ConstBuffer input, MutBuffer output,
                                                           int root) {
  const std::uint64_t index = collectives_++;
  Envelope call = e;
  call.peer = root;
  const std::lock_guard lock(hub_->mutex);
  auto [it, first] = hub_->meetings.try_emplace(index);
  MeetingPoint& point = it->second;
  const bool on_device = hub_->copy->collective_on_device(call, rank_, input.data, output.data);
  if (first) {
    point.call = call;
    point.first_rank = rank_;
    point.inputs.resize(static_cast<std::size_t>(size()));
    point.on_device = on_device;
    point.kept.resize(static_cast<std::size_t>(size()));
  } else if (point.conflict.empty() && on_device != point.on_device) {
    point.conflict =
        fmt::format("collective #{} of the job: rank {} passed {} memory, rank {} {} memory", index + 1,
                    point.first_rank, point.on_device ? "device" : "host", rank_, on_device ? "device" : "host");
  } else if (point.conflict.empty() &&
             (call.operation != point.call.operation || call.count != point.call.count ||
              call.dtype != point.call.dtype || call.op != point.call.op || call.peer != point.call.peer)) {
    point.conflict =
        fmt::format("collective #{} of the job: rank {} called {} of {} x {}, rank {} called {} of {} x {}", index + 1,
                    point.first_rank, describe(point.call), point.call.count, to_string(point.call.dtype), rank_,
                    describe(call), call.count, to_string(call.dtype));
  }
  if (input.data != nullptr && point.on_device) {
    point.kept[static_cast<std::size_t>(rank_)] = hub_->copy->keep(input.data, rank_, input.bytes());
  } else if (input.data != nullptr) {
    std::vector<std::byte>& copy = point.inputs[static_cast<std::size_t>(rank_)];
    copy.resize(input.bytes());
    if (!copy.empty()) hub_->copy->copy(copy.data(), input.data, copy.size());
  }
  ++point.arrived;
  return std::make_unique<CollectiveState>(*hub_, index, output);
}

std::unique_ptr<Request::State> LoopbackCommunicator::post_barrier() {
  return meet(Envelope{Operation::Barrier, -1, Channel::Collective, 0, RingLevel::Flat, 0, DType::Bytes}, {}, {}, -1);
}
std::unique_ptr<Request::State> LoopbackCommunicator::post_allreduce(MutBuffer data, const Envelope& e) {
  return meet(e, data, data, -1);
}
std::unique_ptr<Request::State> LoopbackCommunicator::post_allgather(ConstBuffer mine, MutBuffer all,
                                                                     const Envelope& e) {
  return meet(e, mine, all, -1);
}
std::unique_ptr<Request::State> LoopbackCommunicator::post_reduce_scatter(ConstBuffer all, MutBuffer mine,
                                                                          const Envelope& e) {
  return meet(e, all, mine, -1);
}
std::unique_ptr<Request::State> LoopbackCommunicator::post_gather(ConstBuffer mine, MutBuffer all, const Envelope& e) {
  return meet(e, mine, all, -1);
}
std::unique_ptr<Request::State> LoopbackCommunicator::post_broadcast(MutBuffer data, int root, const Envelope& e) {
  return meet(e, rank_ == root ? ConstBuffer(data) : ConstBuffer{}, data, root);
}

bool LoopbackCommunicator::test(Request::State& state, const Envelope& e) {
  const std::lock_guard lock(hub_->mutex);
  return static_cast<LoopbackState&>(state).complete(rank_, e);
}

void host_message_copy(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }

std::shared_ptr<LoopbackHub> make_loopback_hub(int ranks, std::shared_ptr<MessageCopy> copy) {
  if (ranks < 1) throw Error(Problem{"loopback job", fmt::format("{} ranks", ranks), "at least 1", ""});
  return std::make_shared<LoopbackHub>(
      ranks, copy != nullptr ? std::move(copy) : function_message_copy(host_message_copy, false));
}

std::vector<std::unique_ptr<Communicator>> make_loopback_communicators(int ranks, CommOptions options,
                                                                       std::shared_ptr<MessageCopy> copy) {
  const auto hub = make_loopback_hub(ranks, std::move(copy));
  std::vector<std::unique_ptr<Communicator>> out;
  out.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) out.push_back(std::make_unique<LoopbackCommunicator>(hub, r, options));
  return out;
}

std::vector<std::unique_ptr<Communicator>> make_loopback_communicators(int ranks, CommOptions options,
                                                                       CopyFunction device_copy) {
  return make_loopback_communicators(ranks, options, function_message_copy(device_copy, true));
}

std::unique_ptr<Communicator> make_self_communicator(CommOptions options) {
  return std::move(make_loopback_communicators(1, options).front());
}

}  // namespace burst::rt
