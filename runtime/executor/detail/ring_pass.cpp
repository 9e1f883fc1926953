// The shared ring loop (see ring_pass.hpp).
#include "runtime/executor/detail/ring_pass.hpp"

#include <algorithm>
#include <map>

namespace burst::rt {
namespace {

struct Inbox {
  std::vector<std::byte> wire;
  Request request;
};

// comm.wait(request), recorded as a wait for its message when tracing.
void wait_for(Communicator& comm, Request& request, TraceRecorder* recorder) {
  if (recorder == nullptr) return comm.wait(request);
  const Envelope message = request.envelope();
  const double start = recorder->now();
  comm.wait(request);
  recorder->receive(message, start);
}

}  // namespace

RingPassResult run_ring_pass(const RingSchedule& schedule, Communicator& comm, RingPassSpec spec) {
  const int me = schedule.ring_rank(comm.rank());
  const int ring = schedule.ring_size();
  const bool accumulate = spec.accumulator_size > 0;
  const WireFormat payload_wire =
      spec.payload_wire.parts().empty() ? WireFormat::uniform(spec.own_payload.size(), DType::F32) : spec.payload_wire;
  const WireFormat acc_wire = WireFormat::uniform(spec.accumulator_size, spec.accumulator_dtype);

  std::vector<Hop> reads, accs;
  for (const Hop& h : schedule.read_hops(spec.travel)) {
    if (h.src == me || h.dst == me) reads.push_back(h);
  }
  if (accumulate) {
    for (const Hop& h : schedule.accumulator_hops(spec.travel)) {
      if (h.src == me || h.dst == me) accs.push_back(h);
    }
  }
  // Payloads this rank holds, by block (decoded); inboxes of payloads and accumulators on their
  // way; encoded messages until their sends complete.
  std::map<int, std::vector<float>> payloads;
  payloads[me] = std::move(spec.own_payload);
  std::map<int, Inbox> read_inbox, acc_inbox;
  std::vector<std::vector<std::byte>> outbox;
  RingPassResult result;
  result.home_accumulator.assign(spec.accumulator_size, 0.0f);
  std::vector<float> partial(spec.accumulator_size);

  const int member = schedule.member(comm.rank());
  const auto peer = [&](int ring_rank) { return schedule.world_rank(ring_rank, member); };
  const auto note_buffers = [&] {
    std::size_t bytes = sizeof(float) * (partial.size() + result.home_accumulator.size());
    bytes += payloads.size() * payload_wire.bytes();
    for (const auto& [block, in] : read_inbox) bytes += in.wire.size();
    for (const auto& [block, in] : acc_inbox) bytes += in.wire.size();
    for (const auto& message : outbox) bytes += message.size();
    result.peak_buffer_bytes = std::max(result.peak_buffer_bytes, bytes);
  };
  std::vector<Request> sends;
  const auto send = [&](std::span<const float> data, const WireFormat& wire, const Hop& h, Channel channel) {
    outbox.emplace_back(wire.bytes());
    wire.encode(data, outbox.back());
    sends.push_back(comm.isend(std::span<const std::byte>(outbox.back()), peer(h.dst), channel, h.use_step, h.level));
    if (spec.recorder != nullptr) spec.recorder->send(sends.back().envelope());
    ++result.messages_sent;
  };
  const auto post_receive = [&](Inbox& in, const WireFormat& wire, const Hop& h, Channel channel) {
    in.wire.assign(wire.bytes(), std::byte{0});
    in.request = comm.irecv(std::span<std::byte>(in.wire), peer(h.src), channel, h.use_step, h.level);
    ++result.messages_received;
  };
  for (int s = 0; s < ring; ++s) {
    // The block of this step arrives first: this rank computes with it, forwards it, or both.
    const int b = schedule.block_at(spec.travel, me, s);
    if (const auto it = read_inbox.find(b); it != read_inbox.end()) {
      wait_for(comm, it->second.request, spec.recorder);
      std::vector<float>& payload = payloads[b];
      payload.resize(payload_wire.floats());
      payload_wire.decode(it->second.wire, payload);
      read_inbox.erase(it);
    }
    sends.clear();
    for (const Hop& h : reads) {
      if (h.send_step != s) continue;
      if (h.dst == me) {
        post_receive(read_inbox[h.block], payload_wire, h, spec.read_channel);
      } else {
        send(payloads.at(h.block), payload_wire, h, spec.read_channel);
      }
    }
    for (const Hop& h : accs) {
      if (h.send_step == s && h.dst == me) post_receive(acc_inbox[h.block], acc_wire, h, spec.accumulator_channel);
    }
    if (!spec.overlap) {
      // Transfer, then compute: this step's read sends and receives complete before the kernel.
      // Every rank posts its step-s reads before it waits, so the waits always meet their peers.
      comm.wait_all(sends);
      for (const Hop& h : reads) {
        if (h.send_step == s && h.dst == me) wait_for(comm, read_inbox.at(h.block).request, spec.recorder);
      }
    }

    if (schedule.holder_needs(spec.travel, b, s)) {
      std::fill(partial.begin(), partial.end(), 0.0f);
      const double start = spec.recorder != nullptr ? spec.recorder->now() : 0.0;
      spec.compute(b, payloads.at(b), partial);
      if (spec.recorder != nullptr) spec.recorder->compute(s, b, start);
      ++result.blocks_computed;
      if (accumulate) {
        if (const auto it = acc_inbox.find(b); it != acc_inbox.end()) {
          wait_for(comm, it->second.request, spec.recorder);
          std::vector<float> arrived(spec.accumulator_size);
          acc_wire.decode(it->second.wire, arrived);
          for (std::size_t i = 0; i < partial.size(); ++i) partial[i] += arrived[i];
          acc_inbox.erase(it);
        }
        bool sent = false;
        for (const Hop& h : accs) {
          if (h.block == b && h.src == me && h.send_step == s) {
            send(partial, acc_wire, h, spec.accumulator_channel);
            sent = true;
          }
        }
        if (!sent && b == me) result.home_accumulator = partial;
      }
    }
    note_buffers();
    if (spec.recorder != nullptr && !sends.empty()) {
      const double start = spec.recorder->now();
      comm.wait_all(sends);
      spec.recorder->sends_done(s, start);
    } else {
      comm.wait_all(sends);
    }
    outbox.clear();
    // Payloads this rank will neither compute with nor send again are released.
    for (auto it = payloads.begin(); it != payloads.end();) {
      const int block = it->first;
      bool later = block == me;
      for (const Hop& h : reads) later = later || (h.block == block && h.src == me && h.send_step > s);
      for (int t = s + 1; t < ring && !later; ++t) later = schedule.block_at(spec.travel, me, t) == block;
      it = later ? std::next(it) : payloads.erase(it);
    }
  }
  // The final hop home of this rank's own accumulator.
  if (const auto it = acc_inbox.find(me); it != acc_inbox.end()) {
    wait_for(comm, it->second.request, spec.recorder);
    acc_wire.decode(it->second.wire, result.home_accumulator);
  }
  return result;
}

}  // namespace burst::rt
