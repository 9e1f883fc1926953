// Host fp32 tensors through any AttentionKernels backend, for tests: each call stores the
// inputs in the backend's memory (Q, K, V, dO as `dtype`; lse, D, accumulators as fp32), runs
// the operation and loads the outputs back, with the host-view signatures of attention.hpp.
// backward ADDS into d_q, d_k, d_v as the backends do.
#pragma once

#include <span>

#include "runtime/kernels/attention_kernels.hpp"

namespace burst::test {

class HostTensorKernels {
 public:
  HostTensorKernels(rt::AttentionKernels& kernels, rt::DType dtype) : kernels_(kernels), dtype_(dtype) {}

  rt::KernelStats forward(const rt::BlockPair& in, const rt::AttentionMask& mask, rt::View o, std::span<float> lse) {
    const Stored q = store(in.q, dtype_), k = store(in.k, dtype_), v = store(in.v, dtype_);
    const Stored o_out = store(o, rt::DType::F32), lse_out = store(lse, rt::DType::F32);
    const rt::KernelStats stats = kernels_.forward(pair(in, q, k, v), mask, o_out.floats(), lse_out.floats());
    load(o_out, o);
    load(lse_out, lse);
    return stats;
  }

  void merge(rt::View o, std::span<float> lse, rt::ConstView o_i, std::span<const float> lse_i) {
    const Stored o_acc = store(o, rt::DType::F32), lse_acc = store(lse, rt::DType::F32);
    const Stored o_part = store(o_i, rt::DType::F32), lse_part = store(lse_i, rt::DType::F32);
    kernels_.merge(o.shape, o_acc.floats(), lse_acc.floats(), o_part.floats(), lse_part.floats());
    load(o_acc, o);
    load(lse_acc, lse);
  }

  void delta(rt::ConstView o, rt::ConstView d_o, std::span<float> delta) {
    const Stored o_in = store(o, rt::DType::F32), d_o_in = store(d_o, rt::DType::F32),
                 out = store(delta, rt::DType::F32);
    kernels_.delta(o_in.operand(o.shape), d_o_in.operand(o.shape), out.floats());
    load(out, delta);
  }

  rt::KernelStats backward(const rt::BlockPair& in, const rt::AttentionMask& mask, rt::ConstView d_o,
                           std::span<const float> delta, std::span<const float> lse, rt::View d_q, rt::View d_k,
                           rt::View d_v) {
    const Stored q = store(in.q, dtype_), k = store(in.k, dtype_), v = store(in.v, dtype_), g = store(d_o, dtype_);
    const Stored delta_in = store(delta, rt::DType::F32), lse_in = store(lse, rt::DType::F32);
    const Stored dq = store(d_q, rt::DType::F32), dk = store(d_k, rt::DType::F32), dv = store(d_v, rt::DType::F32);
    const rt::KernelStats stats = kernels_.backward(pair(in, q, k, v), mask, g.operand(d_o.shape), delta_in.floats(),
                                                    lse_in.floats(), dq.floats(), dk.floats(), dv.floats());
    load(dq, d_q);
    load(dk, d_k);
    load(dv, d_v);
    return stats;
  }

 private:
  struct Stored {
    rt::MemoryBlock block;
    rt::DType dtype;
    [[nodiscard]] float* floats() const { return block.floats(); }
    [[nodiscard]] rt::Operand operand(rt::Shape shape) const { return {block.data(), dtype, shape}; }
  };

  Stored store(std::span<const float> values, rt::DType dtype) {
    Stored s{kernels_.memory().allocate(values.size() * rt::dtype_size(dtype)), dtype};
    kernels_.memory().store(values, dtype, s.block.data());
    return s;
  }
  Stored store(rt::ConstView v, rt::DType dtype) {
    return store(std::span<const float>(v.data, static_cast<std::size_t>(v.shape.elements())), dtype);
  }
  void load(const Stored& s, std::span<float> out) { kernels_.memory().load(s.block.data(), rt::DType::F32, out); }
  void load(const Stored& s, rt::View out) {
    load(s, std::span<float>(out.data, static_cast<std::size_t>(out.shape.elements())));
  }

  static rt::PairOperands pair(const rt::BlockPair& in, const Stored& q, const Stored& k, const Stored& v) {
    return {q.operand(in.q.shape), k.operand(in.k.shape), v.operand(in.v.shape), in.q_positions, in.k_positions};
  }

  rt::AttentionKernels& kernels_;
  rt::DType dtype_;
};

}  // namespace burst::test
