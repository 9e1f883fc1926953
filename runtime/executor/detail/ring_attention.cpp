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

// A host tensor stored in the kernels' memory as `dtype`, and the operand that reads it.
struct Resident {
  MemoryBlock block;
  Operand operand;
};

Resident resident(KernelMemory& memory, std::span<const float> host, DType dtype, Shape shape) {
  MemoryBlock block = memory.allocate(host.size() * dtype_size(dtype));
  memory.store(host, dtype, block.data());
  const Operand operand{block.data(), dtype, shape};
  return {std::move(block), operand};
}

Resident resident(KernelMemory& memory, ConstView host, DType dtype) {
  return resident(memory, values(host), dtype, host.shape);
}

// n fp32 values in the kernels' memory, zeroed.
MemoryBlock zeroed(KernelMemory& memory, std::size_t n) {
  MemoryBlock block = memory.allocate(n * sizeof(float));
  memory.zero(block.data(), block.bytes());
  return block;
}

// A tensor of the kernels' memory back in a host tensor.
Tensor to_host(KernelMemory& memory, const MemoryBlock& block, Shape shape) {
  Tensor out(shape);
  memory.load(block.data(), DType::F32, out.values());
  return out;
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

RingForward RingAttention::forward(ConstView q, ConstView k, ConstView v) {
  KernelMemory& memory = kernels_.memory();
  const DType act = execution_.precision.activations;
  const auto elements = static_cast<std::size_t>(q_shape_.elements());
  const auto rows = static_cast<std::size_t>(q_shape_.tokens * q_shape_.heads);
  const Resident q_in = resident(memory, q, act);
  // o accumulates from zero; o_i and lse_i are overwritten by every forward call.
  const MemoryBlock o = zeroed(memory, elements), o_i = memory.allocate(elements * sizeof(float)),
                    lse_i = memory.allocate(rows * sizeof(float));
  const Resident lse = resident(memory, std::vector<float>(rows, -std::numeric_limits<float>::infinity()), DType::F32,
                                {q_shape_.tokens, q_shape_.heads, 1});
  RingForward out;
  RingPassSpec spec;
  spec.travel = Travel::KeysAndValues;
  spec.read_channel = Channel::KvRing;
  spec.own_payload = pack({values(k), values(v)});
  spec.payload_wire = kv_block_wire(kv_shape_, act);
  spec.compute = [&](int block, const std::byte* payload, float*) {
    const std::pair<Operand, Operand> kv = kv_operands(payload);
    return counted(out.stats, [&] {
      const PairOperands pair{q_in.operand, kv.first, kv.second, positions(me_), positions(block)};
      const KernelStats stats = kernels_.forward(pair, mask_, o_i.floats(), lse_i.floats());
      kernels_.merge(q_shape_, o.floats(), lse.block.floats(), o_i.floats(), lse_i.floats());
      return stats;
    });
  };
  const RingPassResult pass = run_pass(std::move(spec), out.stats);
  out.o = to_host(memory, o, q_shape_);
  out.lse.resize(rows);
  memory.load(lse.block.data(), DType::F32, out.lse);
  record(out.stats, pass, elements + rows);
  return out;
}

RingBackward RingAttention::backward(BackwardMode mode, ConstView q, ConstView k, ConstView v, ConstView o,
                                     std::span<const float> lse, ConstView d_o) {
  KernelMemory& memory = kernels_.memory();
  const DType act = execution_.precision.activations;
  const Shape rows_shape{q_shape_.tokens, q_shape_.heads, 1};
  const auto rows = static_cast<std::size_t>(q_shape_.tokens * q_shape_.heads);
  const auto kv_elements = static_cast<std::size_t>(kv_shape_.elements());
  RingBackward out;
  // D = rowsum(O dO) from fp32 copies of both, which go once it is computed (every row written).
  const MemoryBlock delta = memory.allocate(rows * sizeof(float));
  {
    const Resident o_in = resident(memory, o, DType::F32), d_o_f32 = resident(memory, d_o, DType::F32);
    kernels_.delta(o_in.operand, d_o_f32.operand, delta.floats());
  }

  RingPassSpec spec;
  if (mode == BackwardMode::QRing) {
    // The query side travels; dK, dV stay here; dQ follows its block home.
    std::vector<float> delta_host(rows);
    memory.load(delta.data(), DType::F32, delta_host);
    const Resident k_in = resident(memory, k, act), v_in = resident(memory, v, act);
    const MemoryBlock d_k = zeroed(memory, kv_elements), d_v = zeroed(memory, kv_elements);
    const std::size_t q_bytes = static_cast<std::size_t>(q_shape_.elements()) * dtype_size(act);
    spec.travel = Travel::Queries;
    spec.read_channel = Channel::QRing;
    spec.own_payload = pack({values(q), values(d_o), delta_host, lse});
    spec.payload_wire = query_pack_wire(q_shape_, act);
    spec.accumulator_size = static_cast<std::size_t>(q_shape_.elements());
    spec.accumulator_dtype = execution_.precision.dq;
    spec.compute = [&](int block, const std::byte* payload, float* partial_dq) {
      const auto* stats_of_block = reinterpret_cast<const float*>(payload + 2 * q_bytes);  // NOLINT: fp32 parts
      const PairOperands pair{{payload, act, q_shape_}, k_in.operand, v_in.operand, positions(block), positions(me_)};
      return counted(out.stats, [&] {
        return kernels_.backward(pair, mask_, {payload + q_bytes, act, q_shape_}, stats_of_block, stats_of_block + rows,
                                 partial_dq, d_k.floats(), d_v.floats());
      });
    };
    const RingPassResult pass = run_pass(std::move(spec), out.stats);
    out.d_q = Tensor(q_shape_);
    std::copy(pass.home_accumulator.begin(), pass.home_accumulator.end(), out.d_q.values().begin());
    out.d_k = to_host(memory, d_k, kv_shape_);
    out.d_v = to_host(memory, d_v, kv_shape_);
    record(out.stats, pass, rows);
    return out;
  }
  // K,V travel with their dK, dV accumulators; Q, dO, D, lse stay; dQ accumulates here.
  const Resident q_in = resident(memory, q, act), d_o_in = resident(memory, d_o, act);
  const Resident lse_in = resident(memory, lse, DType::F32, rows_shape);
  const MemoryBlock d_q = zeroed(memory, static_cast<std::size_t>(q_shape_.elements()));
  spec.travel = Travel::KeysAndValues;
  spec.read_channel = Channel::KvRing;
  spec.own_payload = pack({values(k), values(v)});
  spec.payload_wire = kv_block_wire(kv_shape_, act);
  spec.accumulator_size = 2 * kv_elements;
  spec.accumulator_channel = Channel::DkvRing;
  spec.accumulator_dtype = execution_.precision.dkv;
  spec.compute = [&](int block, const std::byte* payload, float* partial_dkv) {
    const std::pair<Operand, Operand> kv = kv_operands(payload);
    return counted(out.stats, [&] {
      const PairOperands pair{q_in.operand, kv.first, kv.second, positions(me_), positions(block)};
      return kernels_.backward(pair, mask_, d_o_in.operand, delta.floats(), lse_in.block.floats(), d_q.floats(),
                               partial_dkv, partial_dkv + kv_elements);
    });
  };
  const RingPassResult pass = run_pass(std::move(spec), out.stats);
  out.d_q = to_host(memory, d_q, q_shape_);
  out.d_k = Tensor(kv_shape_);
  out.d_v = Tensor(kv_shape_);
  std::copy_n(pass.home_accumulator.begin(), kv_elements, out.d_k.values().begin());
  std::copy_n(pass.home_accumulator.begin() + static_cast<std::ptrdiff_t>(kv_elements), kv_elements,
              out.d_v.values().begin());
  record(out.stats, pass, rows);
  return out;
}

}  // namespace burst::rt
