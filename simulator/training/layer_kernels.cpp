// A decoder layer's kernels outside attention, one by one, as the GPU runs them.
//
// GEMMs: the QKV projection, the output projection, the MLP's input matrices (gate and up
// together when gated) and its output matrix. Forward 2 FLOPs per parameter per token; each
// backward GEMM splits in two of the same size (input gradient and weight gradient). A GEMM of
// m x k by k x n runs at the efficiency of the square GEMM of the same work, side
// cbrt(m n k): a 1K-token chunk of the LM head against a 128K vocabulary is a large GEMM, not a
// 1K one, while a layer's GEMMs at a few thousand tokens run well below peak.
//
// Elementwise kernels move bytes and barely compute, so they are priced by memory bandwidth
// (KernelKind::Elementwise, amount = bytes). Per token, e bytes per element (bf16), h hidden,
// hq = heads x head_dim, hkv = KV heads x head_dim, f the MLP width:
//   forward   norm before attention   read h, write h             2 e h
//             RoPE on Q and K         read and write hq + hkv     2 e (hq + hkv)
//             residual add            read 2 h, write h           3 e h
//             norm before the MLP                                 2 e h
//             activation              gated: read 2 f, write f    3 e f   (GELU: 2 e f)
//             residual add                                        3 e h
//   backward  two norms               read x and dy, write dx     3 e h each
//             RoPE                                                2 e (hq + hkv)
//             activation              gated: read gate, up, dy; write d gate, d up   5 e f
//                                     (GELU: read x, dy, write dx                    3 e f)
//             two residual adds       the skip's gradient plus the branch's          3 e h each
//             D = rowsum(dO * O)      read 2 hq, write fp32 per head   2 e hq + 4 heads
// The LM head's loss:
// per logit read the bf16 logit, write and read the fp32 softmax, write the bf16 gradient
// (2 e + 8 bytes), one kernel pair per chunk.
//
// Every kernel costs at least the launch gap (compute_models.cpp), so at few tokens per GPU the
// layer's forty-odd kernels cost their launches, not their bytes or FLOPs.
//
// FP8 linears (LinearPrecision::Fp8) run the four GEMMs on FP8 tensor cores at
// hw::fp8_over_bf16 times the bf16 rate (2 on Hopper), at the same efficiency curve: on Hopper
// that curve is cuBLASLt's FP8 run itself (docs/cost-models.md). The casts to FP8 are elementwise
// kernels, as the job's library (Fp8Library) runs them; per GEMM of input X, output gradient dY
// and weight W:
//   TransformerEngine: X cast with its transpose before the forward GEMM, dY likewise before the
//     backward ones (NVIDIA/TransformerEngine @d0067d0d transformer_engine/pytorch/module/
//     linear.py, the input quantizer in `_linear_forward_impl`; module/base.py
//     `grad_output_preprocess`): read e, write 1 + 1 bytes an element, one kernel each, on this
//     GPU's 1 / T of the tensor (under sequence parallelism a column-parallel layer's input is
//     cast before it is gathered, a row-parallel layer's output gradient before it is gathered).
//     Weights are cast once a step (`is_first_microbatch`), left out.
//   torchao (pytorch/ao @36027d82 torchao/float8/float8_linear.py,
//     `matmul_with_hp_or_float8_args`, tensorwise dynamic scaling, as TorchTitan's float8 runs
//     it): every cast (`hp_tensor_to_float8_dynamic`) is an amax pass (read e) then the cast
//     (read e, write 1), two kernels; the forward casts X and W, the backward dY twice (for the
//     input and the weight gradient), W and X again. It works on what the GEMM sees: the whole
//     gathered input and output gradient under tensor parallelism. torch.compile fuses some of
//     these passes into their neighbours; the count is the eager code's, an upper bound.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include "simulator/detail/training/iteration_parts.hpp"
#include "topologies/hardware.hpp"

namespace burst::sim {
double gemm_seconds(const ComputeModel& compute, const topo::GpuSpec& gpu, double m, double n, double k,
                    double speedup) {
  constexpr double kMaxBlock = std::numeric_limits<std::int32_t>::max();
  Task task;
  task.kind = TaskKind::Compute;
  task.kernel = KernelKind::Gemm;
  task.amount = 2 * m * n * k / speedup;  // the bf16 FLOPs of the same time
  task.block_q = task.block_k = static_cast<std::int32_t>(std::clamp(std::cbrt(m * n * k), 1.0, kMaxBlock));
  return compute.seconds(task, gpu);
}

namespace {

double streaming_seconds(const ComputeModel& compute, const topo::GpuSpec& gpu, std::span<const double> bytes) {
  double total = 0;
  for (const double b : bytes) {
    Task task;
    task.kind = TaskKind::Compute;
    task.kernel = KernelKind::Elementwise;
    task.amount = b;
    total += compute.seconds(task, gpu);
  }
  return total;
}

}  // namespace

double LayerElementwiseBytes::total() const {
  return std::accumulate(forward.begin(), forward.end(), 0.0) + std::accumulate(backward.begin(), backward.end(), 0.0);
}

LayerElementwiseBytes layer_elementwise_bytes(const ModelSpec& m, double tokens, int tp, int dtype_bytes) {
  // Sequence parallelism splits the norms and residual adds over c / T tokens, and the heads and
  // MLP width split RoPE and the activation: every elementwise kernel moves 1 / T.
  const double e = dtype_bytes, h = m.hidden, f = m.ffn;
  const double hq = static_cast<double>(m.heads) * m.head_dim, hkv = static_cast<double>(m.kv_heads) * m.head_dim;
  const double activation_forward = (m.gated_mlp ? 3 : 2) * e * f, activation_backward = (m.gated_mlp ? 5 : 3) * e * f;
  const double s = tokens / std::max(1, tp);  // tokens (or token-equivalents of the split heads and width) per kernel
  return {{s * 2 * e * h, s * 2 * e * (hq + hkv), s * 3 * e * h, s * 2 * e * h, s * activation_forward, s * 3 * e * h},
          {s * 3 * e * h, s * 3 * e * h, s * 2 * e * (hq + hkv), s * activation_backward, s * 3 * e * h, s * 3 * e * h,
           s * (2 * e * hq + 4.0 * m.heads)}};
}

LayerKernels layer_kernels(const TrainingJob& job, double tokens, int tp, const ComputeModel& compute,
                           const topo::GpuSpec& gpu) {
  // Tensor parallelism splits every matrix's output (column-parallel: QKV, the MLP's input) or
  // input (row-parallel: the output projection, the MLP's output) T ways over all c tokens.
  const ModelSpec& m = job.model;
  const double t = std::max(1, tp), e = job.dtype_bytes;
  const double c = tokens, h = m.hidden, f = m.ffn;
  const double hq = static_cast<double>(m.heads) * m.head_dim, hkv = static_cast<double>(m.kv_heads) * m.head_dim;
  const double mlp_in = (m.gated_mlp ? 2 : 1) * h * f;
  LayerKernels k;
  const std::array<std::array<double, 2>, 4> matrices = {
      {{h, (hq + 2 * hkv) / t}, {hq / t, h}, {h, mlp_in / h / t}, {f / t, h}}};
  const bool fp8 = job.linears == LinearPrecision::Fp8;
  const bool torchao = job.fp8_library == Fp8Library::Torchao;
  const double speedup = fp8 ? topo::hw::fp8_over_bf16(gpu.model) : 1.0;
  std::vector<double> forward_casts, backward_casts;  // bytes of each cast kernel
  // torchao's dynamic cast of n elements: the amax pass, then the cast.
  const auto scaled_cast = [&](std::vector<double>& kernels, double n) {
    kernels.push_back(n * e);
    kernels.push_back(n * (e + 1));
  };
  for (std::size_t i = 0; i < matrices.size(); ++i) {
    const bool column = i % 2 == 0;
    const double in = matrices[i][0], out = matrices[i][1];
    const double forward = gemm_seconds(compute, gpu, c, out, in, speedup);
    k.gemm_forward_s += forward;
    k.gemm_backward_s += 2 * forward;
    if (column) k.column_gemm_backward_s += 2 * forward;
    if (torchao) {
      scaled_cast(forward_casts, c * in);
      scaled_cast(forward_casts, in * out);
      for (const double n : {c * out, c * out, in * out, c * in}) scaled_cast(backward_casts, n);
    } else {
      forward_casts.push_back(c * in * (e + 2) / (column ? t : 1.0));
      backward_casts.push_back(c * out * (e + 2) / (column ? 1.0 : t));
    }
  }
  const LayerElementwiseBytes bytes = layer_elementwise_bytes(m, tokens, tp, job.dtype_bytes);
  k.elementwise_forward_s = streaming_seconds(compute, gpu, bytes.forward);
  k.elementwise_backward_s = streaming_seconds(compute, gpu, bytes.backward);
  if (fp8) {
    k.elementwise_forward_s += streaming_seconds(compute, gpu, forward_casts);
    k.elementwise_backward_s += streaming_seconds(compute, gpu, backward_casts);
  }
  return k;
}

double loss_seconds(const ModelSpec& m, double tokens, int tp, int chunks, int dtype_bytes, const ComputeModel& compute,
                    const topo::GpuSpec& gpu) {
  const double per_chunk = tokens / chunks * static_cast<double>(m.vocab) / std::max(1, tp) * (2.0 * dtype_bytes + 8);
  const std::array<double, 2> kernels = {per_chunk / 2, per_chunk / 2};
  return chunks * streaming_seconds(compute, gpu, kernels);
}

}  // namespace burst::sim
