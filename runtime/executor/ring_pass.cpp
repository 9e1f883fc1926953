// The shared ring loop (see ring_pass.hpp).
#include "runtime/executor/ring_pass.hpp"

#include <algorithm>
#include <map>

namespace burst::rt {
namespace {

struct Inbox {
  std::vector<float> data;
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
  const std::size_t payload_size = spec.own_payload.size();
  const bool accumulate = spec.accumulator_size > 0;

  std::vector<Hop> reads, accs;
  for (const Hop& h : schedule.read_hops(spec.travel)) {
    if (h.src == me || h.dst == me) reads.push_back(h);
  }
  if (accumulate) {
    for (const Hop& h : schedule.accumulator_hops(spec.travel)) {
      if (h.src == me || h.dst == me) accs.push_back(h);
    }
  }
  // Payloads this rank holds, by block; inboxes of payloads and accumulators on their way.
  std::map<int, std::vector<float>> payloads;
  payloads[me] = std::move(spec.own_payload);
  std::map<int, Inbox> read_inbox, acc_inbox;
  std::map<int, std::vector<float>> accumulators;  // block -> accumulator being sent on
  RingPassResult result;
  result.home_accumulator.assign(spec.accumulator_size, 0.0f);
  std::vector<float> partial(spec.accumulator_size);

  const int member = schedule.member(comm.rank());
  const auto peer = [&](int ring_rank) { return schedule.world_rank(ring_rank, member); };
  const auto note_buffers = [&] {
    std::size_t floats = partial.size() + result.home_accumulator.size();
    for (const auto& [block, data] : payloads) floats += data.size();
    for (const auto& [block, in] : read_inbox) floats += in.data.size();
    for (const auto& [block, in] : acc_inbox) floats += in.data.size();
    for (const auto& [block, data] : accumulators) floats += data.size();
    result.peak_buffer_floats = std::max(result.peak_buffer_floats, floats);
  };
  std::vector<Request> sends;
  const auto send = [&](std::span<const float> data, const Hop& h, Channel channel) {
    sends.push_back(comm.isend(data, peer(h.dst), channel, h.use_step, h.level));
    if (spec.recorder != nullptr) spec.recorder->send(sends.back().envelope());
    ++result.messages_sent;
  };
  for (int s = 0; s < ring; ++s) {
    // The block of this step arrives first: this rank computes with it, forwards it, or both.
    const int b = schedule.block_at(me, s);
    if (const auto it = read_inbox.find(b); it != read_inbox.end()) {
      wait_for(comm, it->second.request, spec.recorder);
      payloads[b] = std::move(it->second.data);
      read_inbox.erase(it);
    }
    sends.clear();
    for (const Hop& h : reads) {
      if (h.send_step != s) continue;
      if (h.dst == me) {
        Inbox& in = read_inbox[h.block];
        in.data.assign(payload_size, 0.0f);
        in.request = comm.irecv(std::span<float>(in.data), peer(h.src), spec.read_channel, h.use_step, h.level);
        ++result.messages_received;
      } else {
        send(payloads.at(h.block), h, spec.read_channel);
      }
    }
    for (const Hop& h : accs) {
      if (h.send_step != s || h.dst != me) continue;
      Inbox& in = acc_inbox[h.block];
      in.data.assign(spec.accumulator_size, 0.0f);
      in.request = comm.irecv(std::span<float>(in.data), peer(h.src), spec.accumulator_channel, h.use_step, h.level);
      ++result.messages_received;
    }

    if (schedule.holder_needs(spec.travel, b, s)) {
      std::fill(partial.begin(), partial.end(), 0.0f);
      const double start = spec.recorder != nullptr ? spec.recorder->now() : 0.0;
      spec.compute(b, payloads.at(b), partial);
      if (spec.recorder != nullptr) spec.recorder->compute(s, b, start);
      ++result.blocks_computed;
      if (accumulate) {
        std::vector<float> acc = std::move(partial);
        partial.assign(spec.accumulator_size, 0.0f);
        if (const auto it = acc_inbox.find(b); it != acc_inbox.end()) {
          wait_for(comm, it->second.request, spec.recorder);
          for (std::size_t i = 0; i < acc.size(); ++i) acc[i] += it->second.data[i];
          acc_inbox.erase(it);
        }
        bool sent = false;
        for (const Hop& h : accs) {
          if (h.block == b && h.src == me && h.send_step == s) {
            accumulators[b] = std::move(acc);
            send(accumulators[b], h, spec.accumulator_channel);
            sent = true;
          }
        }
        if (!sent && b == me) result.home_accumulator = std::move(acc);
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
    // Payloads this rank will neither compute with nor send again are released.
    for (auto it = payloads.begin(); it != payloads.end();) {
      const int block = it->first;
      bool later = block == me;
      for (const Hop& h : reads) later = later || (h.block == block && h.src == me && h.send_step > s);
      for (int t = s + 1; t < ring && !later; ++t) later = schedule.block_at(me, t) == block;
      it = later ? std::next(it) : payloads.erase(it);
    }
    accumulators.clear();
  }
  // The final hop home of this rank's own accumulator.
  if (const auto it = acc_inbox.find(me); it != acc_inbox.end()) {
    wait_for(comm, it->second.request, spec.recorder);
    result.home_accumulator = std::move(it->second.data);
  }
  return result;
}

}  // namespace burst::rt
