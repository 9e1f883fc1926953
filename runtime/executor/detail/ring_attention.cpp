// Forward and backward over the ring (see ring_attention.hpp): what each phase packs, sends and
// computes, on top of the shared loop in ring_pass.hpp.
#include "runtime/executor/detail/ring_attention.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/stopwatch.hpp"
#include "runtime/executor/detail/ring_pass.hpp"

namespace burst::rt {
namespace {

std::size_t elements_of(Shape shape) { return static_cast<std::size_t>(shape.elements()); }

// n fp32 values in the kernels' memory, zeroed.
MemoryBlock zeroed(KernelMemory& memory, std::size_t n) {
  MemoryBlock block = memory.allocate(n * sizeof(float));
  memory.zero(block.data(), block.bytes());
  return block;
}

// `t` widened to fp32 in the kernels' memory (delta's inputs): zero, then accumulate.
MemoryBlock widened(KernelMemory& memory, const Operand& t) {
  MemoryBlock block = zeroed(memory, elements_of(t.shape));
  memory.accumulate(block.floats(), t.data, t.dtype, elements_of(t.shape));
  return block;
}

// Runs one step's kernel calls, timed into stats.compute_s and counted into stats.kernels; the
// kernels' device time, for the trace.
template <typename Call>
double counted(RingAttentionStats& stats, Call&& call) {
  KernelStats step;
  timed([&] { step = call(); }, stats.compute_s);
  stats.kernels += step;
  return step.device_s;
}

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

std::span<const std::int64_t> RingAttention::positions(int ring_rank) const {
  return positions_[static_cast<std::size_t>(ring_rank)];
}

std::pair<Operand, Operand> RingAttention::kv_operands(const std::byte* payload) const {
  const DType act = execution_.precision.activations;
  const std::size_t k_bytes = static_cast<std::size_t>(kv_shape_.elements()) * dtype_size(act);
  return {{payload, act, kv_shape_}, {payload + k_bytes, act, kv_shape_}};
}

RingPassResult RingAttention::run_pass(RingPassSpec spec, RingAttentionStats& stats) {
  spec.memory = &kernels_.memory();
  spec.recorder = execution_.recorder;
  spec.overlap = execution_.overlap;
  RingPassResult pass = run_ring_pass(schedule_, comm_, std::move(spec));
  // A backend whose calls return before their kernels end (CUDA) reports their device time here;
  // the host's time inside its calls would be launch time only.
  if (const double device_s = kernels_.take_device_seconds(); device_s > 0) stats.compute_s = device_s;
  return pass;
}

void RingAttention::require(const Operand& t, DType dtype, Shape shape, const char* what) const {
  if (t.dtype == dtype && t.shape.elements() == shape.elements() && (t.data != nullptr || shape.elements() == 0))
    return;
  throw Error(Problem{"ring attention",
                      fmt::format("{} is {} {} elements", what, to_string(t.dtype), t.shape.elements()),
                      fmt::format("{} {} elements in the kernels' memory", to_string(dtype), shape.elements()), ""});
}

MemoryBlock RingAttention::assemble(const WireFormat& wire, std::initializer_list<Operand> parts) const {
  KernelMemory& memory = kernels_.memory();
  MemoryBlock block = memory.allocate(wire.bytes());
  std::size_t at = 0, i = 0;
  for (const Operand& part : parts) {
    const WirePart& w = wire.parts()[i++];
    require(part, w.dtype, {static_cast<std::int64_t>(w.count), 1, 1}, "a payload part");
    memory.copy(block.data() + at, part.data, w.count * dtype_size(w.dtype));
    at += w.count * dtype_size(w.dtype);
  }
  return block;
}

RingOutputs RingAttention::forward(Operand q, Operand k, Operand v) {
  KernelMemory& memory = kernels_.memory();
  const DType act = execution_.precision.activations;
  require(q, act, q_shape_, "q");
  const auto elements = elements_of(q_shape_);
  const auto rows = static_cast<std::size_t>(q_shape_.tokens * q_shape_.heads);
  RingOutputs out;
  // o accumulates from zero, lse from -inf; o_i and lse_i are overwritten by every forward call.
  out.o = zeroed(memory, elements);
  out.lse = memory.allocate(rows * sizeof(float));
  memory.fill(out.lse.floats(), kNegInf, rows);
  const MemoryBlock o_i = memory.allocate(elements * sizeof(float)), lse_i = memory.allocate(rows * sizeof(float));
  RingPassSpec spec;
  spec.travel = Travel::KeysAndValues;
  spec.read_channel = Channel::KvRing;
  spec.own_payload = assemble(kv_block_wire(kv_shape_, act), {k, v});
  const Operand q_in{q.data, act, q_shape_};
  spec.compute = [&](int block, const std::byte* payload, float*) {
    const std::pair<Operand, Operand> kv = kv_operands(payload);
    return counted(out.stats, [&] {
      const PairOperands pair{q_in, kv.first, kv.second, positions(me_), positions(block)};
      const KernelStats stats = kernels_.forward(pair, mask_, o_i.floats(), lse_i.floats());
      kernels_.merge(q_shape_, out.o.floats(), out.lse.floats(), o_i.floats(), lse_i.floats());
      return stats;
    });
  };
  const RingPassResult pass = run_pass(std::move(spec), out.stats);
  record(out.stats, pass, elements + rows);
  return out;
}

RingGradients RingAttention::backward(BackwardMode mode, Operand q, Operand k, Operand v, Operand o, Operand lse,
                                      Operand d_o) {
  KernelMemory& memory = kernels_.memory();
  const DType act = execution_.precision.activations;
  require(q, act, q_shape_, "q");
  require(d_o, act, q_shape_, "dO");
  require(lse, DType::F32, {q_shape_.tokens, q_shape_.heads, 1}, "lse");
  const auto rows = static_cast<std::size_t>(q_shape_.tokens * q_shape_.heads);
  const auto kv_elements = elements_of(kv_shape_);
  RingGradients out;
  // D = rowsum(O dO) from fp32 copies of both, which go once it is computed (every row written).
  MemoryBlock delta = memory.allocate(rows * sizeof(float));
  {
    const MemoryBlock o_f32 = widened(memory, o), d_o_f32 = widened(memory, d_o);
    kernels_.delta({o_f32.data(), DType::F32, q_shape_}, {d_o_f32.data(), DType::F32, q_shape_}, delta.floats());
  }

  RingPassSpec spec;
  if (mode == BackwardMode::QRing) {
    // The query side travels; dK, dV stay here; dQ follows its block home.
    require(k, act, kv_shape_, "k");
    require(v, act, kv_shape_, "v");
    out.d_k = zeroed(memory, kv_elements);
    out.d_v = zeroed(memory, kv_elements);
    const std::size_t q_bytes = elements_of(q_shape_) * dtype_size(act);
    spec.travel = Travel::Queries;
    spec.read_channel = Channel::QRing;
    spec.own_payload = assemble(query_pack_wire(q_shape_, act),
                                {q, d_o, {delta.data(), DType::F32, {q_shape_.tokens, q_shape_.heads, 1}}, lse});
    delta = {};  // it travels in the pack
    spec.accumulator_size = elements_of(q_shape_);
    spec.accumulator_dtype = execution_.precision.dq;
    const Operand k_in{k.data, act, kv_shape_}, v_in{v.data, act, kv_shape_};
    spec.compute = [&](int block, const std::byte* payload, float* partial_dq) {
      // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): fp32 parts
      const auto* stats_of_block = reinterpret_cast<const float*>(payload + 2 * q_bytes);
      const PairOperands pair{{payload, act, q_shape_}, k_in, v_in, positions(block), positions(me_)};
      return counted(out.stats, [&] {
        return kernels_.backward(pair, mask_, {payload + q_bytes, act, q_shape_}, stats_of_block, stats_of_block + rows,
                                 partial_dq, out.d_k.floats(), out.d_v.floats());
      });
    };
    RingPassResult pass = run_pass(std::move(spec), out.stats);
    out.d_q = std::move(pass.home_accumulator);
    record(out.stats, pass, rows);
    return out;
  }
  // K,V travel with their dK, dV accumulators; Q, dO, D, lse stay; dQ accumulates here.
  out.d_q = zeroed(memory, elements_of(q_shape_));
  spec.travel = Travel::KeysAndValues;
  spec.read_channel = Channel::KvRing;
  spec.own_payload = assemble(kv_block_wire(kv_shape_, act), {k, v});
  spec.accumulator_size = 2 * kv_elements;
  spec.accumulator_channel = Channel::DkvRing;
  spec.accumulator_dtype = execution_.precision.dkv;
  const Operand q_in{q.data, act, q_shape_}, d_o_in{d_o.data, act, q_shape_};
  const auto* lse_in =
      reinterpret_cast<const float*>(lse.data);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): fp32 statistics
  spec.compute = [&](int block, const std::byte* payload, float* partial_dkv) {
    const std::pair<Operand, Operand> kv = kv_operands(payload);
    return counted(out.stats, [&] {
      const PairOperands pair{q_in, kv.first, kv.second, positions(me_), positions(block)};
      return kernels_.backward(pair, mask_, d_o_in, delta.floats(), lse_in, out.d_q.floats(), partial_dkv,
                               partial_dkv + kv_elements);
    });
  };
  RingPassResult pass = run_pass(std::move(spec), out.stats);
  // The home accumulator is dK then dV: dV moves to a block of its own, dK keeps the first half.
  out.d_v = memory.allocate(kv_elements * sizeof(float));
  memory.copy(out.d_v.data(), pass.home_accumulator.data() + kv_elements * sizeof(float), kv_elements * sizeof(float));
  out.d_k = std::move(pass.home_accumulator);
  record(out.stats, pass, rows);
  return out;
}

}  // namespace burst::rt
