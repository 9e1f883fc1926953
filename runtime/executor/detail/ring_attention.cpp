// Forward and backward over the ring (see ring_attention.hpp): what each phase packs, sends and
// computes, on top of the shared loop in ring_pass.hpp.
#include "runtime/executor/detail/ring_attention.hpp"

#include <algorithm>

#include "common/stopwatch.hpp"
#include "runtime/executor/detail/ring_pass.hpp"

namespace burst::rt {
namespace {

// Payloads are the tensors of a block back to back.
std::vector<float> pack(std::initializer_list<std::span<const float>> parts) {
  std::vector<float> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

std::span<const float> values(ConstView v) { return {v.data, static_cast<std::size_t>(v.shape.elements())}; }

// Cuts a packed payload back into its parts.
class Unpacker {
 public:
  explicit Unpacker(std::span<const float> data) : data_(data) {}
  ConstView view(Shape shape) {
    const auto n = static_cast<std::size_t>(shape.elements());
    ConstView v{data_.data() + offset_, shape};
    offset_ += n;
    return v;
  }
  std::span<const float> span(std::size_t n) {
    const auto s = data_.subspan(offset_, n);
    offset_ += n;
    return s;
  }

 private:
  std::span<const float> data_;
  std::size_t offset_ = 0;
};

View view_of(std::span<float> data, Shape shape) { return {data.data(), shape}; }


// The pass's counts, and its buffers plus the phase's workspace of `workspace_floats`.
void record(RingAttentionStats& stats, const RingPassResult& pass, std::size_t workspace_floats) {
  stats.blocks_computed = pass.blocks_computed;
  stats.messages_sent = pass.messages_sent;
  stats.messages_received = pass.messages_received;
  stats.ring_buffer_bytes = pass.peak_buffer_bytes + sizeof(float) * static_cast<std::uint64_t>(workspace_floats);
}

}  // namespace

RingAttention::RingAttention(const RingSchedule& schedule, Communicator& comm, Shape q_shape, Shape kv_shape,
                             AttentionExecution execution)
    : schedule_(schedule),
      comm_(comm),
      q_shape_(q_shape),
      kv_shape_(kv_shape),
      execution_(execution),
      kernels_(execution.kernels_to_use()),
      mask_{schedule.mask(), std::nullopt},
      me_(schedule.ring_rank(comm.rank())) {
  for (int k = 0; k < schedule.ring_size(); ++k) positions_.push_back(schedule.positions(k));
}

RingForward RingAttention::forward(ConstView q, ConstView k, ConstView v) {
  RingForward out;
  out.o = Tensor(q_shape_);
  out.lse.assign(static_cast<std::size_t>(q_shape_.tokens * q_shape_.heads), -std::numeric_limits<float>::infinity());
  Tensor o_i(q_shape_);
  std::vector<float> lse_i(out.lse.size());
  RingPassSpec spec;
  spec.travel = Travel::KeysAndValues;
  spec.read_channel = Channel::KvRing;
  spec.own_payload = pack({values(k), values(v)});
  spec.payload_wire = kv_block_wire(kv_shape_, execution_.precision.activations);
  spec.compute = [&](int block, std::span<const float> payload, std::span<float>) {
    Unpacker in(payload);
    const ConstView kb = in.view(kv_shape_), vb = in.view(kv_shape_);
    KernelStats pair;
    timed([&] {
      pair = kernels_.forward({q, kb, vb, positions_[static_cast<std::size_t>(me_)], positions_[static_cast<std::size_t>(block)]},
                              mask_, o_i.view(), lse_i);
      kernels_.merge(out.o.view(), out.lse, o_i.view(), lse_i);
    }, out.stats.compute_s);
    out.stats.kernels += pair;
    return pair.device_s;
  };
  spec.recorder = execution_.recorder;
  spec.overlap = execution_.overlap;
  const RingPassResult pass = run_ring_pass(schedule_, comm_, std::move(spec));
  record(out.stats, pass, o_i.values().size() + lse_i.size());
  return out;
}

RingBackward RingAttention::backward(BackwardMode mode, ConstView q, ConstView k, ConstView v, ConstView o,
                                     std::span<const float> lse, ConstView d_o) {
  RingBackward out;
  out.d_q = Tensor(q_shape_);
  out.d_k = Tensor(kv_shape_);
  out.d_v = Tensor(kv_shape_);
  std::vector<float> delta(lse.size());
  kernels_.delta(o, d_o, delta);
  const auto& my_positions = positions_[static_cast<std::size_t>(me_)];
  const auto rows = static_cast<std::size_t>(q_shape_.tokens * q_shape_.heads);
  const auto kv_elements = static_cast<std::size_t>(kv_shape_.elements());

  RingPassSpec spec;
  if (mode == BackwardMode::QRing) {
    // The query side travels; dK, dV stay here; dQ follows its block home.
    spec.travel = Travel::Queries;
    spec.read_channel = Channel::QRing;
    spec.own_payload = pack({values(q), values(d_o), delta, lse});
    spec.payload_wire = query_pack_wire(q_shape_, execution_.precision.activations);
    spec.accumulator_size = static_cast<std::size_t>(q_shape_.elements());
    spec.accumulator_dtype = execution_.precision.dq;
    spec.compute = [&](int block, std::span<const float> payload, std::span<float> partial_dq) {
      Unpacker in(payload);
      const ConstView qb = in.view(q_shape_), dob = in.view(q_shape_);
      const auto delta_b = in.span(rows), lse_b = in.span(rows);
      KernelStats pair;
      timed([&] {
        pair = kernels_.backward({qb, k, v, positions_[static_cast<std::size_t>(block)], my_positions}, mask_, dob,
                                 delta_b, lse_b, view_of(partial_dq, q_shape_), out.d_k.view(), out.d_v.view());
      }, out.stats.compute_s);
      out.stats.kernels += pair;
      return pair.device_s;
    };
  } else {
    // K,V travel with their dK, dV accumulators; Q, dO, D, lse stay; dQ accumulates here.
    spec.travel = Travel::KeysAndValues;
    spec.read_channel = Channel::KvRing;
    spec.own_payload = pack({values(k), values(v)});
    spec.payload_wire = kv_block_wire(kv_shape_, execution_.precision.activations);
    spec.accumulator_size = 2 * kv_elements;
    spec.accumulator_channel = Channel::DkvRing;
    spec.accumulator_dtype = execution_.precision.dkv;
    spec.compute = [&](int block, std::span<const float> payload, std::span<float> partial_dkv) {
      Unpacker in(payload);
      const ConstView kb = in.view(kv_shape_), vb = in.view(kv_shape_);
      KernelStats pair;
      timed([&] {
        pair = kernels_.backward({q, kb, vb, my_positions, positions_[static_cast<std::size_t>(block)]}, mask_, d_o,
                                 delta, lse, out.d_q.view(), view_of(partial_dkv.first(kv_elements), kv_shape_),
                                 view_of(partial_dkv.subspan(kv_elements), kv_shape_));
      }, out.stats.compute_s);
      out.stats.kernels += pair;
      return pair.device_s;
    };
  }
  spec.recorder = execution_.recorder;
  spec.overlap = execution_.overlap;
  const RingPassResult pass = run_ring_pass(schedule_, comm_, std::move(spec));
  if (mode == BackwardMode::QRing) {
    std::copy(pass.home_accumulator.begin(), pass.home_accumulator.end(), out.d_q.values().begin());
  } else {
    std::copy_n(pass.home_accumulator.begin(), kv_elements, out.d_k.values().begin());
    std::copy_n(pass.home_accumulator.begin() + static_cast<std::ptrdiff_t>(kv_elements), kv_elements,
                out.d_v.values().begin());
  }
  record(out.stats, pass, delta.size());
  return out;
}

}  // namespace burst::rt
