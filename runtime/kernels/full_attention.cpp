// Attention over one whole sequence from the block kernels, and the small helpers of
// attention.hpp. With one block the ring degenerates: the forward's partial is already final,
// so the backward takes its lse directly and D = rowsum(O * dO).
#include <numeric>

#include "runtime/kernels/attention.hpp"

namespace burst::rt {

KernelStats& KernelStats::operator+=(const KernelStats& other) {
  tiles_computed += other.tiles_computed;
  tiles_skipped += other.tiles_skipped;
  flops += other.flops;
  allowed_pairs += other.allowed_pairs;
  device_s += other.device_s;
  return *this;
}

std::vector<std::int64_t> contiguous_positions(std::int64_t n) {
  std::vector<std::int64_t> positions(static_cast<std::size_t>(n));
  std::iota(positions.begin(), positions.end(), std::int64_t{0});
  return positions;
}

FullAttention full_attention(ConstView q, ConstView k, ConstView v, ConstView d_o,
                             std::span<const std::int64_t> positions, const AttentionMask& mask,
                             const KernelOptions& options) {
  const BlockPair in{q, k, v, positions, positions};
  FullAttention r{Tensor(q.shape),
                  std::vector<float>(static_cast<std::size_t>(q.shape.tokens * q.shape.heads)),
                  Tensor(q.shape),
                  Tensor(k.shape),
                  Tensor(k.shape),
                  {},
                  {}};
  r.forward = attention_forward(in, mask, r.o.view(), r.lse, options);
  std::vector<float> delta(r.lse.size());
  attention_delta(r.o.view(), d_o, delta);
  r.backward = attention_backward(in, mask, d_o, delta, r.lse, r.d_q.view(), r.d_k.view(), r.d_v.view(), options);
  return r;
}

}  // namespace burst::rt
