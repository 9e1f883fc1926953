// What a plan's precision fields mean for the executor.
//
//   /job/dtype            bf16: Q, K, V, O, dO and dQ, dK, dV are stored and travel as bf16
//                         (rounded to nearest even), while the softmax statistics (lse, D) and
//                         every accumulator stay fp32, as the simulator and docs assume; fp32:
//                         everything fp32. fp16 is refused (no fp16 path).
//   /strategy/dq_bytes    2: the travelling dQ accumulator of the query-side backward is sent
//                         as bf16, rounded at every hop; 4: fp32.
//   /strategy/dkv_bytes   the same for the dK,dV accumulators of the K,V-ring backward.
//   /job/linears          absent: the linear layers' GEMMs in the job's dtype; "fp8" (priced for
//                         the frameworks `burst export` writes) is refused for training.
// Any other value is refused with the field's JSON pointer and the valid values.
#pragma once

#include "common/json_reader.hpp"
#include "plan/plan.hpp"
#include "runtime/comm/dtype.hpp"

namespace burst::rt {

struct AttentionPrecision {
  DType activations = DType::F32;  // stored and sent tensors: fp32 or bf16
  DType dq = DType::F32;           // travelling dQ accumulators
  DType dkv = DType::F32;          // travelling dK,dV accumulators
  friend bool operator==(const AttentionPrecision&, const AttentionPrecision&) = default;
};

// The plan's precision; throws burst::Error naming every field the runtime cannot honour.
[[nodiscard]] AttentionPrecision precision_of(const plan::Plan& plan);
// Throws burst::Error when the plan's linear layers are not in the job's dtype: the runtime's
// GEMMs are bf16 or fp32 (a training run checks it before any rank starts work; `burst launch`
// notes it, since an --attention-only run trains no linear layer).
void require_runnable_linears(const plan::Plan& plan);
// {"activations": "bf16", "dq": "bf16", "dkv": "fp32"}, for reports.
[[nodiscard]] Json precision_json(const AttentionPrecision& precision);

}  // namespace burst::rt
