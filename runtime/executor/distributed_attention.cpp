// Ulysses all-to-alls around the ring pass (see distributed_attention.hpp).
#include "runtime/executor/distributed_attention.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace burst::rt {
namespace {

// The all-to-all's step numbers, one per tensor, so messages of different tensors never match.
enum A2aStep : int { kQ, kK, kV, kO, kLse, kDO, kDQ, kDK, kDV };

Shape split_shape(Shape local, int u) { return {local.tokens * u, local.heads / u, local.head_dim}; }

// The level the all-to-all's bytes are counted under (on their own channel, Channel::Ulysses):
// a group is consecutive ranks, inside a node whenever it fits, so "intra" beside a double
// ring's levels and "flat" beside a flat ring.
RingLevel group_level(const RingSchedule& schedule) {
  return schedule.geometry().outer == 1 ? RingLevel::Flat : RingLevel::Intra;
}

}  // namespace

DistributedAttention::DistributedAttention(const RingSchedule& schedule, Communicator& comm, Shape q_shape,
                                           Shape kv_shape, KernelOptions kernel_options, TraceRecorder* recorder)
    : comm_(comm),
      u_(schedule.ulysses()),
      group_(schedule.group(schedule.ring_rank(comm.rank()))),
      q_shape_(q_shape),
      kv_shape_(kv_shape),
      q_split_(split_shape(q_shape, u_)),
      kv_split_(split_shape(kv_shape, u_)),
      level_(group_level(schedule)),
      ring_(schedule, comm, q_split_, kv_split_, kernel_options, recorder) {
  if (q_shape.heads % u_ != 0 || kv_shape.heads % u_ != 0) {
    throw Error(Problem{"plan:/strategy/ulysses",
                        fmt::format("Ulysses degree {} does not divide {} heads and {} KV heads", u_, q_shape.heads, kv_shape.heads),
                        "a degree dividing both", ""});
  }
}

Tensor DistributedAttention::scatter(ConstView local, int step) {
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
  comm_.all_to_all(std::span<const float>(send), out.values(), group_, Channel::Ulysses, step, level_);
  return out;
}

Tensor DistributedAttention::gather(ConstView split, int step) {
  const Shape local{split.shape.tokens / u_, split.shape.heads * u_, split.shape.head_dim};
  Tensor out(local);
  std::vector<float> received(static_cast<std::size_t>(split.shape.elements()));
  comm_.all_to_all(std::span<const float>(split.data, received.size()), std::span<float>(received), group_,
                   Channel::Ulysses, step, level_);
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

RingForward DistributedAttention::forward(ConstView q, ConstView k, ConstView v) {
  if (u_ == 1) return ring_.forward(q, k, v);
  const Tensor qs = scatter(q, kQ), ks = scatter(k, kK), vs = scatter(v, kV);
  RingForward split = ring_.forward(qs.view(), ks.view(), vs.view());
  RingForward out;
  out.o = gather(split.o.view(), kO);
  const Tensor lse = gather(ConstView{split.lse.data(), {q_split_.tokens, q_split_.heads, 1}}, kLse);
  out.lse.assign(lse.values().begin(), lse.values().end());
  out.stats = split.stats;
  // The head-split inputs and outputs live beside the ring's buffers: charge them with those.
  out.stats.ring_buffer_bytes += sizeof(float) * (qs.values().size() + ks.values().size() + vs.values().size() +
                                                  split.o.values().size() + split.lse.size());
  return out;
}

RingBackward DistributedAttention::backward(BackwardMode mode, ConstView q, ConstView k, ConstView v, ConstView o,
                                            std::span<const float> lse, ConstView d_o) {
  if (u_ == 1) return ring_.backward(mode, q, k, v, o, lse, d_o);
  const Tensor qs = scatter(q, kQ), ks = scatter(k, kK), vs = scatter(v, kV), os = scatter(o, kO),
               dos = scatter(d_o, kDO);
  const Tensor lses = scatter(ConstView{lse.data(), {q_shape_.tokens, q_shape_.heads, 1}}, kLse);
  RingBackward split = ring_.backward(mode, qs.view(), ks.view(), vs.view(), os.view(), lses.values(), dos.view());
  RingBackward out;
  out.d_q = gather(split.d_q.view(), kDQ);
  out.d_k = gather(split.d_k.view(), kDK);
  out.d_v = gather(split.d_v.view(), kDV);
  out.stats = split.stats;
  out.stats.ring_buffer_bytes +=
      sizeof(float) * (qs.values().size() + ks.values().size() + vs.values().size() + os.values().size() +
                       dos.values().size() + lses.values().size() + split.d_q.values().size() +
                       split.d_k.values().size() + split.d_v.values().size());
  return out;
}

}  // namespace burst::rt
