// The per-element arithmetic of a logits row's cross-entropy, for the CPU LM head and the
// CUDA kernels alike. With top = max_v l_v and sum = sum_v exp(l_v - top) (the caller sums,
// in its order), lse = top + log(sum), the row's loss is lse - l_target and its gradient is
//   dl_v = scale (softmax_v - [v = target]),  softmax_v = exp(l_v - lse)
// in T (double on the CPU), rounded to float.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "runtime/kernels/hd/math.hpp"

namespace burst::rt::hd {

// A target that is not counted (the sequence's last token, a document's end under its mask).
inline constexpr std::int32_t kIgnoredTarget = -1;

// exp(l - top): one term of the row's sum.
template <typename T>
BURST_HOST_DEVICE inline T log_sum_exp_term(float logit, T top) {
  return exp_of(logit - top);
}

template <typename T>
BURST_HOST_DEVICE inline T log_sum_exp_of(T top, T sum) {
  return top + log_of(sum);
}

// dl_v of logit l_v, which is the target's or not.
template <typename T>
BURST_HOST_DEVICE inline float softmax_minus_onehot(float logit, T lse, bool is_target, T scale) {
  const T p = exp_of(logit - lse);
  return static_cast<float>(scale * (is_target ? p - T(1) : p));
}

}  // namespace burst::rt::hd
