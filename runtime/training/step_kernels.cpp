// HostStepKernels: the step's operations on host fp32 tensors (layer_ops.hpp, OpenBLAS), and
// the CPU cross-entropy of a logits row (hd/cross_entropy_row.hpp, summed in double).
#include "runtime/training/step_kernels.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/stopwatch.hpp"
#include "runtime/training/detail/layer_ops.hpp"
#include "runtime/training/model.hpp"
#include "runtime/training/hd/cross_entropy_row.hpp"

namespace burst::rt {
namespace {

// The floats of a host fp32 tensor; anything else is a caller's bug, named.
std::span<float> floats(StepTensor t, std::string_view call, std::string_view name) {
  if (t.dtype != DType::F32) {
    throw Error(Problem{fmt::format("{}: {}", call, name), fmt::format("a {} tensor", to_string(t.dtype)),
                        "fp32 (the CPU step computes in fp32)", ""});
  }
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): fp32 storage
  return {reinterpret_cast<float*>(t.data), t.count};
}

// log sum_v exp(row[v]), max-subtracted, summed in double.
double log_sum_exp(const float* row, std::int64_t vocab) {
  const double top = *std::max_element(row, row + vocab);
  double sum = 0;
  for (std::int64_t v = 0; v < vocab; ++v) sum += hd::log_sum_exp_term(row[v], top);
  return hd::log_sum_exp_of(top, sum);
}

}  // namespace

StepTensor host_tensor(std::span<float> values) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): fp32 storage
  return {reinterpret_cast<std::byte*>(values.data()), values.size(), DType::F32};
}

StepTensor host_tensor(std::span<const float> values) {
  // The step never writes a tensor it reads as an input; StepTensor has one pointer type for both.
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): fp32 storage
  return host_tensor(std::span<float>(const_cast<float*>(values.data()), values.size()));
}

StepTensor host_tensor(std::vector<float>& values) { return host_tensor(std::span<float>(values)); }

HostStepKernels::HostStepKernels(std::unique_ptr<KernelMemory> memory) : memory_(std::move(memory)) {
  if (memory_ == nullptr || memory_->space() != MemorySpace::Host) {
    throw Error(
        Problem{"HostStepKernels", "memory that is not host memory", "host memory (the CPU's loops read it)", ""});
  }
}

BoundTensor HostStepKernels::bind_params(StepTensor params) {
  (void)floats(params, "bind_params", "params");
  return {params, {}};
}

BoundTensor HostStepKernels::bind_gradients(StepTensor grads) {
  (void)floats(grads, "bind_gradients", "grads");
  return {grads, {}};
}

void HostStepKernels::return_gradients(const BoundTensor& bound, StepTensor grads) {
  const std::span<const float> from = floats(bound.tensor, "return_gradients", "bound");
  const std::span<float> to = floats(grads, "return_gradients", "grads");
  if (from.data() != to.data()) std::copy(from.begin(), from.end(), to.begin());
}

void HostStepKernels::time_span(const std::function<void()>& part, double& seconds) { timed(part, seconds); }

double HostStepKernels::squared_norm(StepTensor grads) {
  return rt::squared_norm(floats(grads, "squared_norm", "grads"));
}

void HostStepKernels::adamw_update(const AdamWTensors& range, std::span<const ParamGroup> groups, double norm,
                                   std::int64_t step, const AdamWConfig& config) {
  constexpr std::string_view call = "adamw_update";
  if (range.working.count != 0) {
    throw Error(Problem{"adamw_update: working",
                        fmt::format("a separate working copy of {} values", range.working.count),
                        "none: the CPU's layers read the fp32 master weights", ""});
  }
  rt::adamw_update({range.offset, floats(range.master, call, "master"), floats(range.grads, call, "grads"),
                    floats(range.m, call, "m"), floats(range.v, call, "v")},
                   groups, norm, step, config);
}

void StepKernels::add_rms_norm_forward(StepTensor a, StepTensor b, StepTensor sum, StepTensor gain, std::int64_t rows,
                                       std::int64_t dim, StepTensor y, StepTensor inv_rms) {
  residual_add(a, b, sum);
  rms_norm_forward(sum, gain, rows, dim, y, inv_rms);
}

void HostStepKernels::linear_forward(StepTensor x, std::int64_t rows, std::int64_t in, StepTensor w, std::int64_t out,
                                     StepTensor y) {
  rt::linear_forward(floats(x, "linear_forward", "x"), rows, in, floats(w, "linear_forward", "w"), out,
                     floats(y, "linear_forward", "y"));
}

void HostStepKernels::linear_backward(StepTensor x, std::int64_t rows, std::int64_t in, StepTensor w, std::int64_t out,
                                      StepTensor dy, StepTensor dx, StepTensor dw, bool accumulate_dx) {
  constexpr std::string_view call = "linear_backward";
  rt::linear_backward(floats(x, call, "x"), rows, in, floats(w, call, "w"), out, floats(dy, call, "dy"),
                      floats(dx, call, "dx"), floats(dw, call, "dw"), accumulate_dx);
}

void HostStepKernels::rms_norm_forward(StepTensor x, StepTensor gain, std::int64_t rows, std::int64_t dim, StepTensor y,
                                       StepTensor inv_rms) {
  constexpr std::string_view call = "rms_norm_forward";
  rt::rms_norm_forward(floats(x, call, "x"), floats(gain, call, "gain"), rows, dim, kNormEps, floats(y, call, "y"),
                       floats(inv_rms, call, "inv_rms"));
}

void HostStepKernels::rms_norm_backward(StepTensor x, StepTensor gain, StepTensor inv_rms, StepTensor dy,
                                        std::int64_t rows, std::int64_t dim, StepTensor skip, StepTensor dx,
                                        StepTensor dgain) {
  constexpr std::string_view call = "rms_norm_backward";
  rt::rms_norm_backward(floats(x, call, "x"), floats(gain, call, "gain"), floats(inv_rms, call, "inv_rms"),
                        floats(dy, call, "dy"), rows, dim, floats(dx, call, "dx"), floats(dgain, call, "dgain"));
  if (skip.count > 0) residual_add(dx, skip, dx);
}

void HostStepKernels::rope(StepTensor q, std::int64_t heads, StepTensor k, std::int64_t kv_heads, std::int64_t head_dim,
                           float base, bool backward) {
  const auto rows = static_cast<std::int64_t>(positions_.size());
  for (const View view : {View{floats(q, "rope", "q").data(), {rows, heads, head_dim}},
                          View{floats(k, "rope", "k").data(), {rows, kv_heads, head_dim}}}) {
    (backward ? rope_backward : rope_forward)(view, positions_, base);
  }
}

void HostStepKernels::swiglu_forward(StepTensor u, StepTensor w, StepTensor m) {
  rt::swiglu_forward(floats(u, "swiglu_forward", "u"), floats(w, "swiglu_forward", "w"),
                     floats(m, "swiglu_forward", "m"));
}

void HostStepKernels::swiglu_backward(StepTensor u, StepTensor w, StepTensor dm, StepTensor du, StepTensor dw) {
  constexpr std::string_view call = "swiglu_backward";
  rt::swiglu_backward(floats(u, call, "u"), floats(w, call, "w"), floats(dm, call, "dm"), floats(du, call, "du"),
                      floats(dw, call, "dw"));
}

void HostStepKernels::residual_add(StepTensor a, StepTensor b, StepTensor out) {
  constexpr std::string_view call = "residual_add";
  const std::span<const float> x = floats(a, call, "a"), y = floats(b, call, "b");
  const std::span<float> sum = floats(out, call, "out");
  if (x.size() != sum.size() || y.size() != sum.size()) {
    throw Error(Problem{fmt::format("{}: out", call),
                        fmt::format("{} + {} values into {}", x.size(), y.size(), sum.size()), "three equal sizes",
                        ""});
  }
  for (std::size_t i = 0; i < sum.size(); ++i) sum[i] = x[i] + y[i];
}

void HostStepKernels::copy(StepTensor src, StepTensor dst) {
  if (src.dtype != dst.dtype || src.count != dst.count) {
    throw Error(Problem{
        "copy: dst",
        fmt::format("{} {} values into {} {}", src.count, to_string(src.dtype), dst.count, to_string(dst.dtype)),
        "the same dtype and count", ""});
  }
  std::memcpy(dst.data, src.data, src.bytes());
}

void HostStepKernels::embedding_forward(std::span<const std::int32_t> tokens, StepTensor table, std::int64_t vocab,
                                        std::int64_t dim, StepTensor out) {
  rt::embedding_forward(tokens, floats(table, "embedding_forward", "table"), vocab, dim,
                        floats(out, "embedding_forward", "out"));
}

void HostStepKernels::embedding_backward(std::span<const std::int32_t> tokens, StepTensor dout, std::int64_t vocab,
                                         std::int64_t dim, StepTensor dtable) {
  rt::embedding_backward(tokens, floats(dout, "embedding_backward", "dout"), vocab, dim,
                         floats(dtable, "embedding_backward", "dtable"));
}

LmHeadForward HostStepKernels::cross_entropy_loss(StepTensor logits, std::int64_t rows, std::int64_t vocab,
                                                  std::span<const std::int32_t> targets) {
  const float* all = floats(logits, "cross_entropy_loss", "logits").data();
  LmHeadForward out;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int32_t target = targets[static_cast<std::size_t>(r)];
    if (target == hd::kIgnoredTarget) continue;
    const float* row = all + r * vocab;
    out.loss_sum += log_sum_exp(row, vocab) - row[target];
    ++out.counted;
  }
  return out;
}

void HostStepKernels::cross_entropy_backward(StepTensor logits, std::int64_t rows, std::int64_t vocab,
                                             std::span<const std::int32_t> targets, double scale, StepTensor dl) {
  const float* all = floats(logits, "cross_entropy_backward", "logits").data();
  float* grads = floats(dl, "cross_entropy_backward", "dl").data();
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int32_t target = targets[static_cast<std::size_t>(r)];
    const float* row = all + r * vocab;
    float* grad = grads + r * vocab;
    if (target == hd::kIgnoredTarget) {
      std::fill(grad, grad + vocab, 0.0f);
      continue;
    }
    const double lse = log_sum_exp(row, vocab);  // before the row is overwritten (dl may be the logits)
    for (std::int64_t v = 0; v < vocab; ++v) grad[v] = hd::softmax_minus_onehot(row[v], lse, v == target, scale);
  }
}

}  // namespace burst::rt
