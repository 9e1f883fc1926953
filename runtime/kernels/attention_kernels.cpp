// CpuAttentionKernels: operands as host views, then the tiled CPU kernels (see attention_kernels.hpp).
#include "runtime/kernels/attention_kernels.hpp"

#include <vector>

namespace burst::rt {
namespace {

// An operand as a host view: fp32 in place, bf16 widened into `scratch`. A kernels object may
// serve several ranks' threads at once (the loopback job shares one), so scratch is per call.
ConstView view_of(const Operand& x, std::vector<float>& scratch) {
  require_tensor_dtype(x.dtype, "CpuAttentionKernels");
  if (x.dtype == DType::F32)
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): fp32 storage
    return {reinterpret_cast<const float*>(x.data), x.shape};
  scratch.resize(static_cast<std::size_t>(x.shape.elements()));
  HostKernelMemory().load(x.data, DType::BF16, scratch);
  return {scratch.data(), x.shape};
}

std::size_t rows(Shape s) { return static_cast<std::size_t>(s.tokens * s.heads); }

}  // namespace

KernelStats CpuAttentionKernels::forward(const PairOperands& in, const AttentionMask& mask, float* o, float* lse) {
  std::vector<float> q, k, v;
  const BlockPair pair{view_of(in.q, q), view_of(in.k, k), view_of(in.v, v), in.q_positions, in.k_positions};
  return attention_forward(pair, mask, View{o, in.q.shape}, {lse, rows(in.q.shape)}, options_);
}

void CpuAttentionKernels::merge(Shape shape, float* o, float* lse, const float* o_i, const float* lse_i) {
  merge_partial(View{o, shape}, {lse, rows(shape)}, ConstView{o_i, shape}, {lse_i, rows(shape)});
}

void CpuAttentionKernels::delta(Operand o, Operand d_o, float* delta) {
  std::vector<float> o_scratch, d_o_scratch;
  attention_delta(view_of(o, o_scratch), view_of(d_o, d_o_scratch), {delta, rows(o.shape)});
}

KernelStats CpuAttentionKernels::backward(const PairOperands& in, const AttentionMask& mask, Operand d_o,
                                          const float* delta, const float* lse, float* d_q, float* d_k, float* d_v) {
  std::vector<float> q, k, v, d_o_scratch;
  const BlockPair pair{view_of(in.q, q), view_of(in.k, k), view_of(in.v, v), in.q_positions, in.k_positions};
  const std::size_t n = rows(in.q.shape);
  return attention_backward(pair, mask, view_of(d_o, d_o_scratch), {delta, n}, {lse, n}, View{d_q, in.q.shape},
                            View{d_k, in.k.shape}, View{d_v, in.k.shape}, options_);
}

}  // namespace burst::rt
