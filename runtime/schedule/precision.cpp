// Reading the plan's precision fields (see precision.hpp).
#include "runtime/schedule/precision.hpp"

#include <fmt/format.h>

#include "common/error.hpp"

namespace burst::rt {
namespace {

DType accumulator_dtype(int bytes, const char* pointer, Problems& problems) {
  if (bytes == 2) return DType::BF16;
  if (bytes == 4) return DType::F32;
  problems.add(fmt::format("plan:{}", pointer), fmt::format("{} bytes per travelling gradient element", bytes),
               "2 (bf16) or 4 (fp32)", "the runtime accumulates in fp32 and sends bf16 or fp32");
  return DType::F32;
}

}  // namespace

AttentionPrecision precision_of(const plan::Plan& plan) {
  Problems problems;
  AttentionPrecision p;
  if (plan.job.dtype == "bf16") {
    p.activations = DType::BF16;
  } else if (plan.job.dtype != "fp32") {
    problems.add("plan:/job/dtype", fmt::format("'{}' has no path in the runtime", plan.job.dtype), "bf16, fp32",
                 "plan with --dtype bf16 (the default) or --dtype fp32");
  }
  p.dq = accumulator_dtype(plan.strategy.dq_bytes, "/strategy/dq_bytes", problems);
  p.dkv = accumulator_dtype(plan.strategy.dkv_bytes, "/strategy/dkv_bytes", problems);
  problems.throw_if_any();
  return p;
}

void require_runnable_linears(const plan::Plan& plan) {
  if (plan.job.linears.empty()) return;
  throw Error(Problem{"plan:/job/linears",
                      fmt::format("'{}' linear layers have no path in the runtime", plan.job.linears),
                      "no key: the job's dtype (" + plan.job.dtype + ")",
                      "plan again without --fp8-linears to train it here; burst export writes this plan's FP8 for "
                      "the frameworks that run it"});
}

Json precision_json(const AttentionPrecision& p) {
  return {{"activations", to_string(p.activations)}, {"dq", to_string(p.dq)}, {"dkv", to_string(p.dkv)}};
}

}  // namespace burst::rt
