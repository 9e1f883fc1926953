// Ulysses all-to-alls around the ring pass (see distributed_attention.hpp).
#include "runtime/executor/distributed_attention.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/executor/detail/ring_attention.hpp"

namespace burst::rt {
namespace {

Shape split_shape(Shape local, int u) { return {local.tokens * u, local.heads / u, local.head_dim}; }

}  // namespace

DistributedAttention::DistributedAttention(const RingSchedule& schedule, Communicator& comm, Shape q_shape,
                                           Shape kv_shape, AttentionExecution execution)
    : comm_(comm),
      memory_(execution.kernels_to_use().memory()),
      u_(schedule.ulysses()),
      group_(schedule.group(schedule.ring_rank(comm.rank()))),
      q_shape_(q_shape),
      kv_shape_(kv_shape),
      q_split_(split_shape(q_shape, u_)),
      kv_split_(split_shape(kv_shape, u_)),
      level_(schedule.ulysses_level()),
      precision_(execution.precision),
      ring_(std::make_unique<RingAttention>(schedule, comm, q_split_, kv_split_, execution)) {
  if (q_shape.heads % u_ != 0 || kv_shape.heads % u_ != 0) {
    throw Error(Problem{
        "plan:/strategy/ulysses",
        fmt::format("Ulysses degree {} does not divide {} heads and {} KV heads", u_, q_shape.heads, kv_shape.heads),
        "a degree dividing both", ""});
  }
  member_ = static_cast<std::size_t>(std::find(group_.begin(), group_.end(), comm.rank()) - group_.begin());
}

DistributedAttention::~DistributedAttention() = default;

DistributedAttention::Held DistributedAttention::as_dtype(Operand t, DType dtype) const {
  if (t.dtype == dtype) return {{}, t};
  const auto n = static_cast<std::size_t>(t.shape.elements());
  Held out{memory_.allocate(n * dtype_size(dtype)), {}};
  out.operand = {out.block.data(), dtype, t.shape};
  write(t, {out.block.data(), dtype, t.shape});
  return out;
}

void DistributedAttention::write(const Operand& t, Destination d) const {
  const auto n = static_cast<std::size_t>(d.shape.elements());
  if (static_cast<std::size_t>(t.shape.elements()) != n) {
    throw Error(Problem{"distributed attention",
                        fmt::format("{} elements written into a tensor of {}", t.shape.elements(), n),
                        "tensors of the pass's shapes", ""});
  }
  if (t.dtype == d.dtype) return memory_.copy(d.data, t.data, n * dtype_size(t.dtype));
  if (t.dtype == DType::F32)
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): fp32
    return memory_.convert(reinterpret_cast<const float*>(t.data), d.dtype, d.data, n);
  if (d.dtype != DType::F32) {
    throw Error(Problem{"distributed attention",
                        fmt::format("a {} tensor written as {}", to_string(t.dtype), to_string(d.dtype)),
                        "fp32 or bf16 written as either", ""});
  }
  memory_.zero(d.data, n * sizeof(float));
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): fp32 destination
  memory_.accumulate(reinterpret_cast<float*>(d.data), t.data, t.dtype, n);
}

DistributedAttention::Held DistributedAttention::stored(const MemoryBlock& values, Shape shape, DType dtype) const {
  return as_dtype({values.data(), DType::F32, shape}, dtype);
}

void DistributedAttention::write_rounded(const MemoryBlock& values, Shape shape, Destination d) const {
  const DType act = precision_.activations;
  // One conversion where the destination holds the activation dtype or fp32 activations; a
  // bf16 copy first only where fp32 storage must keep bf16-rounded values (the CPU step's).
  if (act == DType::F32 || d.dtype == act) return write({values.data(), DType::F32, shape}, d);
  write(stored(values, shape, act).operand, d);
}

void DistributedAttention::exchange(const std::byte* send, std::byte* recv, std::size_t block_elements, DType dtype,
                                    UlyssesTensor tensor) {
  const std::size_t count = block_elements * static_cast<std::size_t>(u_);
  comm_.all_to_all(ConstBuffer(send, count, dtype), MutBuffer(recv, count, dtype), group_, Channel::Ulysses,
                   static_cast<int>(tensor), level_);
}

DistributedAttention::Held DistributedAttention::scatter(Operand local, UlyssesTensor tensor) {
  const Shape split = split_shape(local.shape, u_);
  const std::size_t slice = static_cast<std::size_t>(split.heads * split.head_dim) * dtype_size(local.dtype);
  const auto rows = static_cast<std::size_t>(local.shape.tokens), u = static_cast<std::size_t>(u_);
  const std::size_t bytes = rows * u * slice;
  // Block i: this rank's rows of member i's heads; its own block goes straight where it is received.
  const MemoryBlock send = memory_.allocate(bytes);
  Held out{memory_.allocate(bytes), {}};
  for (std::size_t i = 0; i < u; ++i) {
    std::byte* block = (i == member_ ? out.block.data() : send.data()) + i * rows * slice;
    memory_.copy_rows(block, slice, local.data + i * slice, u * slice, slice, rows);
  }
  exchange(send.data(), out.block.data(), rows * static_cast<std::size_t>(split.heads * split.head_dim), local.dtype,
           tensor);
  out.operand = {out.block.data(), local.dtype, split};
  return out;
}

void DistributedAttention::gather(Operand split, UlyssesTensor tensor, std::byte* local) {
  const std::size_t slice =
      static_cast<std::size_t>(split.shape.heads * split.shape.head_dim) * dtype_size(split.dtype);
  const auto u = static_cast<std::size_t>(u_), rows = static_cast<std::size_t>(split.shape.tokens) / u;
  const MemoryBlock received = memory_.allocate(rows * u * slice);
  exchange(split.data, received.data(), rows * static_cast<std::size_t>(split.shape.heads * split.shape.head_dim),
           split.dtype, tensor);
  // Block i: member i's rows of this rank's heads, i.e. this rank's rows of head slice i.
  for (std::size_t i = 0; i < u; ++i) {
    const std::byte* block = (i == member_ ? split.data : received.data()) + i * rows * slice;
    memory_.copy_rows(local + i * slice, u * slice, block, slice, slice, rows);
  }
}

void DistributedAttention::gather_into(Operand split, UlyssesTensor tensor, Destination d) {
  if (d.dtype == split.dtype) return gather(split, tensor, d.data);
  const MemoryBlock local = memory_.allocate(static_cast<std::size_t>(d.shape.elements()) * dtype_size(split.dtype));
  gather(split, tensor, local.data());
  write({local.data(), split.dtype, d.shape}, d);
}

RingAttentionStats DistributedAttention::forward(Operand q_in, Operand k_in, Operand v_in, Destination o,
                                                 Destination lse) {
  comm_.begin_pass(AttentionPass::Forward);
  const DType act = precision_.activations;
  const Held q = as_dtype(q_in, act), k = as_dtype(k_in, act), v = as_dtype(v_in, act);
  const Shape lse_shape{q_split_.tokens, q_split_.heads, 1};
  if (u_ == 1) {
    RingOutputs out = ring_->forward(q.operand, k.operand, v.operand);
    write_rounded(out.o, q_split_, o);
    write({out.lse.data(), DType::F32, lse_shape}, lse);
    return out.stats;
  }
  const Held qs = scatter(q.operand, UlyssesTensor::Q), ks = scatter(k.operand, UlyssesTensor::K),
             vs = scatter(v.operand, UlyssesTensor::V);
  RingOutputs split = ring_->forward(qs.operand, ks.operand, vs.operand);
  const Held os = stored(split.o, q_split_, act);  // a bf16 wire rounds it on the way
  gather_into(os.operand, UlyssesTensor::O, o);
  gather_into({split.lse.data(), DType::F32, lse_shape}, UlyssesTensor::Lse, lse);
  // The head-split inputs and outputs live beside the ring's buffers: charge them with those.
  split.stats.ring_buffer_bytes +=
      qs.block.bytes() + ks.block.bytes() + vs.block.bytes() + os.block.bytes() + split.lse.bytes();
  return split.stats;
}

RingAttentionStats DistributedAttention::backward(BackwardMode mode, Operand q_in, Operand k_in, Operand v_in,
                                                  Operand o_in, Operand lse, Operand d_o_in, Destination d_q,
                                                  Destination d_k, Destination d_v) {
  comm_.begin_pass(AttentionPass::Backward);
  const DType act = precision_.activations;
  const Held q = as_dtype(q_in, act), k = as_dtype(k_in, act), v = as_dtype(v_in, act), o = as_dtype(o_in, act),
             d_o = as_dtype(d_o_in, act);
  if (u_ == 1) {
    RingGradients g = ring_->backward(mode, q.operand, k.operand, v.operand, o.operand, lse, d_o.operand);
    write_rounded(g.d_q, q_split_, d_q);
    write_rounded(g.d_k, kv_split_, d_k);
    write_rounded(g.d_v, kv_split_, d_v);
    return g.stats;
  }
  const Held qs = scatter(q.operand, UlyssesTensor::Q), ks = scatter(k.operand, UlyssesTensor::K),
             vs = scatter(v.operand, UlyssesTensor::V), os = scatter(o.operand, UlyssesTensor::O),
             dos = scatter(d_o.operand, UlyssesTensor::DO),
             lses = scatter({lse.data, DType::F32, {q_shape_.tokens, q_shape_.heads, 1}}, UlyssesTensor::Lse);
  RingGradients split =
      ring_->backward(mode, qs.operand, ks.operand, vs.operand, os.operand, lses.operand, dos.operand);
  const Held dqs = stored(split.d_q, q_split_, act), dks = stored(split.d_k, kv_split_, act),
             dvs = stored(split.d_v, kv_split_, act);
  gather_into(dqs.operand, UlyssesTensor::DQ, d_q);
  gather_into(dks.operand, UlyssesTensor::DK, d_k);
  gather_into(dvs.operand, UlyssesTensor::DV, d_v);
  split.stats.ring_buffer_bytes += qs.block.bytes() + ks.block.bytes() + vs.block.bytes() + os.block.bytes() +
                                   dos.block.bytes() + lses.block.bytes() + dqs.block.bytes() + dks.block.bytes() +
                                   dvs.block.bytes();
  return split.stats;
}

}  // namespace burst::rt
