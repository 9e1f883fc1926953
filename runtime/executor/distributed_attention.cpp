// Ulysses all-to-alls around the ring pass (see distributed_attention.hpp).
#include "runtime/executor/distributed_attention.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "runtime/executor/wire_format.hpp"

namespace burst::rt {
namespace {

Shape split_shape(Shape local, int u) { return {local.tokens * u, local.heads / u, local.head_dim}; }

}  // namespace

DistributedAttention::DistributedAttention(const RingSchedule& schedule, Communicator& comm, Shape q_shape,
                                           Shape kv_shape, AttentionExecution execution)
    : comm_(comm),
      u_(schedule.ulysses()),
      group_(schedule.group(schedule.ring_rank(comm.rank()))),
      q_shape_(q_shape),
      kv_shape_(kv_shape),
      q_split_(split_shape(q_shape, u_)),
      kv_split_(split_shape(kv_shape, u_)),
      level_(schedule.ulysses_level()),
      precision_(execution.precision),
      ring_(schedule, comm, q_split_, kv_split_, execution) {
  if (q_shape.heads % u_ != 0 || kv_shape.heads % u_ != 0) {
    throw Error(Problem{"plan:/strategy/ulysses",
                        fmt::format("Ulysses degree {} does not divide {} heads and {} KV heads", u_, q_shape.heads, kv_shape.heads),
                        "a degree dividing both", ""});
  }
}

void DistributedAttention::exchange(std::span<const float> send, std::span<float> recv, int step, DType wire) {
  if (wire == DType::F32) return comm_.all_to_all(send, recv, group_, Channel::Ulysses, step, level_);
  const WireFormat format = WireFormat::uniform(send.size(), wire);
  std::vector<std::byte> out(format.bytes()), in(format.bytes());
  format.encode(send, out);
  comm_.all_to_all(ConstBuffer(out.data(), send.size(), wire), MutBuffer(in.data(), recv.size(), wire), group_,
                   Channel::Ulysses, step, level_);
  format.decode(in, recv);
}

ConstView DistributedAttention::as_stored(ConstView t, Tensor& keep) const {
  if (precision_.activations == DType::F32) return t;
  keep = Tensor(t.shape);
  std::copy_n(t.data, t.shape.elements(), keep.values().begin());
  round_to_bf16(keep.values());
  return keep.view();
}

Tensor DistributedAttention::scatter(ConstView local, UlyssesTensor tensor, DType wire) {
  const Shape split = split_shape(local.shape, u_);
  const auto slice = static_cast<std::size_t>(split.heads * split.head_dim);  // floats of one row's head slice
  const auto rows = static_cast<std::size_t>(local.shape.tokens);
  std::vector<float> send(static_cast<std::size_t>(local.shape.elements()));
  for (std::size_t i = 0; i < static_cast<std::size_t>(u_); ++i) {
    for (std::size_t t = 0; t < rows; ++t) {
      const float* from = local.data + (t * static_cast<std::size_t>(u_) + i) * slice;
      std::copy_n(from, slice, send.begin() + static_cast<std::ptrdiff_t>((i * rows + t) * slice));
    }
  }
  Tensor out(split);
  exchange(send, out.values(), static_cast<int>(tensor), wire);
  return out;
}

Tensor DistributedAttention::gather(ConstView split, UlyssesTensor tensor, DType wire) {
  const Shape local{split.shape.tokens / u_, split.shape.heads * u_, split.shape.head_dim};
  Tensor out(local);
  std::vector<float> received(static_cast<std::size_t>(split.shape.elements()));
  exchange(std::span<const float>(split.data, received.size()), received, static_cast<int>(tensor), wire);
  const auto slice = static_cast<std::size_t>(split.shape.heads * split.shape.head_dim);
  const auto rows = static_cast<std::size_t>(local.tokens);
  for (std::size_t i = 0; i < static_cast<std::size_t>(u_); ++i) {
    for (std::size_t t = 0; t < rows; ++t) {
      std::copy_n(received.begin() + static_cast<std::ptrdiff_t>((i * rows + t) * slice), slice,
                  out.values().begin() + static_cast<std::ptrdiff_t>((t * static_cast<std::size_t>(u_) + i) * slice));
    }
  }
  return out;
}

RingForward DistributedAttention::forward(ConstView q_in, ConstView k_in, ConstView v_in) {
  comm_.begin_pass(AttentionPass::Forward);
  Tensor kept[3];
  const ConstView q = as_stored(q_in, kept[0]), k = as_stored(k_in, kept[1]), v = as_stored(v_in, kept[2]);
  const DType act = precision_.activations;
  if (u_ == 1) {
    RingForward out = ring_.forward(q, k, v);
    if (act == DType::BF16) round_to_bf16(out.o.values());
    return out;
  }
  const Tensor qs = scatter(q, UlyssesTensor::Q, act), ks = scatter(k, UlyssesTensor::K, act), vs = scatter(v, UlyssesTensor::V, act);
  RingForward split = ring_.forward(qs.view(), ks.view(), vs.view());
  RingForward out;
  out.o = gather(split.o.view(), UlyssesTensor::O, act);  // a bf16 wire rounds it on the way
  const Tensor lse = gather(ConstView{split.lse.data(), {q_split_.tokens, q_split_.heads, 1}}, UlyssesTensor::Lse, DType::F32);
  out.lse.assign(lse.values().begin(), lse.values().end());
  out.stats = split.stats;
  // The head-split inputs and outputs live beside the ring's buffers: charge them with those.
  out.stats.ring_buffer_bytes += sizeof(float) * (qs.values().size() + ks.values().size() + vs.values().size() +
                                                  split.o.values().size() + split.lse.size());
  return out;
}

RingBackward DistributedAttention::backward(BackwardMode mode, ConstView q_in, ConstView k_in, ConstView v_in,
                                            ConstView o_in, std::span<const float> lse, ConstView d_o_in) {
  comm_.begin_pass(AttentionPass::Backward);
  Tensor kept[5];
  const ConstView q = as_stored(q_in, kept[0]), k = as_stored(k_in, kept[1]), v = as_stored(v_in, kept[2]),
                  o = as_stored(o_in, kept[3]), d_o = as_stored(d_o_in, kept[4]);
  const DType act = precision_.activations;
  if (u_ == 1) {
    RingBackward out = ring_.backward(mode, q, k, v, o, lse, d_o);
    for (Tensor* t : {&out.d_q, &out.d_k, &out.d_v}) {
      if (act == DType::BF16) round_to_bf16(t->values());
    }
    return out;
  }
  const Tensor qs = scatter(q, UlyssesTensor::Q, act), ks = scatter(k, UlyssesTensor::K, act), vs = scatter(v, UlyssesTensor::V, act), os = scatter(o, UlyssesTensor::O, act),
               dos = scatter(d_o, UlyssesTensor::DO, act);
  const Tensor lses = scatter(ConstView{lse.data(), {q_shape_.tokens, q_shape_.heads, 1}}, UlyssesTensor::Lse, DType::F32);
  RingBackward split = ring_.backward(mode, qs.view(), ks.view(), vs.view(), os.view(), lses.values(), dos.view());
  RingBackward out;
  out.d_q = gather(split.d_q.view(), UlyssesTensor::DQ, act);
  out.d_k = gather(split.d_k.view(), UlyssesTensor::DK, act);
  out.d_v = gather(split.d_v.view(), UlyssesTensor::DV, act);
  out.stats = split.stats;
  out.stats.ring_buffer_bytes +=
      sizeof(float) * (qs.values().size() + ks.values().size() + vs.values().size() + os.values().size() +
                       dos.values().size() + lses.values().size() + split.d_q.values().size() +
                       split.d_k.values().size() + split.d_v.values().size());
  return out;
}

}  // namespace burst::rt
