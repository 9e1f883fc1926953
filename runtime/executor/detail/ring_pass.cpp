// The shared ring loop (see ring_pass.hpp).
#include "runtime/executor/detail/ring_pass.hpp"

#include <algorithm>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "common/error.hpp"

namespace burst::rt {
namespace {

struct Inbox {
  MemoryBlock wire;
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

ConstBuffer bytes_of(const MemoryBlock& block) { return {block.data(), block.bytes(), DType::Bytes}; }

// One rank's pass: the state the steps share, and one method per part of a step.
class RingPass {
 public:
  RingPass(const RingSchedule& schedule, Communicator& comm, RingPassSpec spec)
      : schedule_(schedule),
        comm_(comm),
        spec_(std::move(spec)),
        memory_(*spec_.memory),
        me_(schedule.ring_rank(comm.rank())),
        member_(schedule.member(comm.rank())),
        payload_bytes_(spec_.own_payload.bytes()),
        acc_bytes_(spec_.accumulator_size * dtype_size(spec_.accumulator_dtype)) {
    for (const Hop& h : schedule.read_hops(spec_.travel)) {
      if (h.src == me_ || h.dst == me_) reads_.push_back(h);
    }
    if (spec_.accumulator_size > 0) {
      for (const Hop& h : schedule.accumulator_hops(spec_.travel)) {
        if (h.src == me_ || h.dst == me_) accs_.push_back(h);
      }
      partial_ = memory_.allocate(spec_.accumulator_size * sizeof(float));
      result_.home_accumulator = memory_.allocate(spec_.accumulator_size * sizeof(float));
      memory_.zero(result_.home_accumulator.data(), result_.home_accumulator.bytes());
    }
    payloads_[me_] = std::move(spec_.own_payload);
  }

  RingPassResult run() {
    for (int s = 0; s < schedule_.ring_size(); ++s) {
      const int b = schedule_.block_at(spec_.travel, me_, s);
      receive_block(b);
      post_transfers(s);
      if (schedule_.holder_needs(spec_.travel, b, s)) compute(s, b);
      note_buffers();
      finish_step(s);
    }
    // The final hop home of this rank's own accumulator.
    if (const auto it = acc_inbox_.find(me_); it != acc_inbox_.end()) {
      wait_for(comm_, it->second.request, spec_.recorder);
      memory_.accumulate(result_.home_accumulator.floats(), it->second.wire.data(), spec_.accumulator_dtype,
                         spec_.accumulator_size);
    }
    return std::move(result_);
  }

 private:
  int peer(int ring_rank) const { return schedule_.world_rank(ring_rank, member_); }

  // The block of this step arrives first: this rank computes with it, forwards it, or both.
  void receive_block(int b) {
    const auto it = read_inbox_.find(b);
    if (it == read_inbox_.end()) return;
    wait_for(comm_, it->second.request, spec_.recorder);
    payloads_[b] = std::move(it->second.wire);
    read_inbox_.erase(it);
  }

  // The receives and read-ring sends of step s (the next blocks travel while it computes;
  // without overlap they complete first), and the receives of arriving accumulators.
  void post_transfers(int s) {
    sends_.clear();
    for (const Hop& h : reads_) {
      if (h.send_step != s) continue;
      if (h.dst == me_) {
        post_receive(read_inbox_[h.block], payload_bytes_, h, spec_.read_channel);
      } else {
        send(payloads_.at(h.block), h, spec_.read_channel);
      }
    }
    for (const Hop& h : accs_) {
      if (h.send_step == s && h.dst == me_) post_receive(acc_inbox_[h.block], acc_bytes_, h, spec_.accumulator_channel);
    }
    if (spec_.overlap) return;
    // Transfer, then compute: this step's read sends and receives complete before the kernel.
    // Every rank posts its step-s reads before it waits, so the waits always meet their peers.
    comm_.wait_all(sends_);
    for (const Hop& h : reads_) {
      if (h.send_step == s && h.dst == me_) wait_for(comm_, read_inbox_.at(h.block).request, spec_.recorder);
    }
  }

  // Computes with block b into a zeroed partial, adds the accumulator arriving from b's previous
  // contributor, and sends the sum on (or keeps it, when b is this rank's and it is home).
  void compute(int s, int b) {
    float* partial = partial_.floats();
    if (partial != nullptr) memory_.zero(partial_.data(), partial_.bytes());
    const double start = spec_.recorder != nullptr ? spec_.recorder->now() : 0.0;
    const double device_s = spec_.compute(b, payloads_.at(b).data(), partial);
    if (spec_.recorder != nullptr) spec_.recorder->compute(s, b, start, device_s);
    ++result_.blocks_computed;
    if (spec_.accumulator_size == 0) return;
    if (const auto it = acc_inbox_.find(b); it != acc_inbox_.end()) {
      wait_for(comm_, it->second.request, spec_.recorder);
      memory_.accumulate(partial, it->second.wire.data(), spec_.accumulator_dtype, spec_.accumulator_size);
      acc_inbox_.erase(it);
    }
    bool sent = false;
    for (const Hop& h : accs_) {
      if (h.block == b && h.src == me_ && h.send_step == s) {
        outbox_.push_back(memory_.allocate(acc_bytes_));
        memory_.convert(partial, spec_.accumulator_dtype, outbox_.back().data(), spec_.accumulator_size);
        send(outbox_.back(), h, spec_.accumulator_channel);
        sent = true;
      }
    }
    if (!sent && b == me_) memory_.copy(result_.home_accumulator.data(), partial_.data(), partial_.bytes());
  }

  // Sends posted at s complete; payloads this rank will neither compute with nor send again go.
  void finish_step(int s) {
    if (spec_.recorder != nullptr && !sends_.empty()) {
      const double start = spec_.recorder->now();
      comm_.wait_all(sends_);
      spec_.recorder->sends_done(s, start);
    } else {
      comm_.wait_all(sends_);
    }
    outbox_.clear();
    for (auto it = payloads_.begin(); it != payloads_.end();) {
      const int block = it->first;
      bool later = block == me_;
      for (const Hop& h : reads_) later = later || (h.block == block && h.src == me_ && h.send_step > s);
      for (int t = s + 1; t < schedule_.ring_size() && !later; ++t)
        later = schedule_.block_at(spec_.travel, me_, t) == block;
      it = later ? std::next(it) : payloads_.erase(it);
    }
  }

  // `block` stays untouched until the step's sends complete (finish_step).
  void send(const MemoryBlock& block, const Hop& h, Channel channel) {
    sends_.push_back(comm_.isend(bytes_of(block), peer(h.dst), channel, h.use_step, h.level));
    if (spec_.recorder != nullptr) spec_.recorder->send(sends_.back().envelope());
    ++result_.messages_sent;
  }

  void post_receive(Inbox& in, std::size_t bytes, const Hop& h, Channel channel) {
    in.wire = memory_.allocate(bytes);
    in.request = comm_.irecv(MutBuffer(in.wire.data(), bytes, DType::Bytes), peer(h.src), channel, h.use_step, h.level);
    ++result_.messages_received;
  }

  void note_buffers() {
    std::size_t bytes = sizeof(float) * 2 * spec_.accumulator_size;  // the partial and the home accumulator
    bytes += payloads_.size() * payload_bytes_;
    for (const auto& [block, in] : read_inbox_) bytes += in.wire.bytes();
    for (const auto& [block, in] : acc_inbox_) bytes += in.wire.bytes();
    for (const auto& message : outbox_) bytes += message.bytes();
    result_.peak_buffer_bytes = std::max(result_.peak_buffer_bytes, bytes);
  }

  const RingSchedule& schedule_;
  Communicator& comm_;
  RingPassSpec spec_;
  KernelMemory& memory_;
  const int me_, member_;
  const std::size_t payload_bytes_;  // one block on the wire
  const std::size_t acc_bytes_;      // one accumulator on the wire
  std::vector<Hop> reads_, accs_;
  std::map<int, MemoryBlock> payloads_;          // blocks this rank holds, in their wire format
  std::map<int, Inbox> read_inbox_, acc_inbox_;  // payloads and accumulators on their way
  std::vector<MemoryBlock> outbox_;              // encoded accumulators until their sends complete
  std::vector<Request> sends_;                   // this step's
  MemoryBlock partial_;                          // fp32, accumulator_size (none without accumulators)
  RingPassResult result_;
};

}  // namespace

RingPassResult run_ring_pass(const RingSchedule& schedule, Communicator& comm, RingPassSpec spec) {
  if (spec.memory == nullptr)
    throw Error(Problem{"run_ring_pass", "no kernel memory given", "the kernels' memory()", ""});
  return RingPass(schedule, comm, std::move(spec)).run();
}

}  // namespace burst::rt
