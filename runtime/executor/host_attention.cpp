// Host tensors through the device-resident executor (see host_attention.hpp).
#include "runtime/executor/detail/host_attention.hpp"

namespace burst::rt {

HostAttention::HostAttention(DistributedAttention& attention, ConstView q, ConstView k, ConstView v, ConstView d_o)
    : attention_(attention),
      q_(store(q)),
      k_(store(k)),
      v_(store(v)),
      d_o_(store(d_o)),
      o_(allocate(q.shape)),
      lse_(allocate({q.shape.tokens, q.shape.heads, 1})),
      d_q_(allocate(q.shape)),
      d_k_(allocate(k.shape)),
      d_v_(allocate(v.shape)) {}

HostAttention::Stored HostAttention::allocate(Shape shape) const {
  return {attention_.memory().allocate(static_cast<std::size_t>(shape.elements()) * sizeof(float)), shape};
}

HostAttention::Stored HostAttention::store(ConstView host) const {
  Stored out = allocate(host.shape);
  attention_.memory().store({host.data, static_cast<std::size_t>(host.shape.elements())}, DType::F32, out.block.data());
  return out;
}

Tensor HostAttention::load(const Stored& t) const {
  Tensor out(t.shape);
  attention_.memory().load(t.block.data(), DType::F32, out.values());
  return out;
}

std::vector<float> HostAttention::lse() const { return std::move(load(lse_)).take(); }

RingAttentionStats HostAttention::forward() {
  return attention_.forward(q_.operand(), k_.operand(), v_.operand(), o_.destination(), lse_.destination());
}

RingAttentionStats HostAttention::backward(BackwardMode mode) {
  return attention_.backward(mode, q_.operand(), k_.operand(), v_.operand(), o_.operand(), lse_.operand(),
                             d_o_.operand(), d_q_.destination(), d_k_.destination(), d_v_.destination());
}

}  // namespace burst::rt
