#include "tools/burst/plan_options.hpp"

#include "common/text.hpp"
#include "planner/search/candidates.hpp"
#include "simulator/engine/engine.hpp"
#include "tools/burst/validators.hpp"

namespace burst::cli {

void add_plan_options(CLI::App& cmd, PlanOptions& o) {
  add_job_options(cmd, o.job);
  cmd.add_option("--memory-budget", o.memory_budget, "Memory per GPU a plan may use, e.g. 64GiB (default: the GPU's)");
  cmd.add_option("--memory-margin", o.memory_margin,
                 "Memory per GPU to keep free beyond the predicted peak and reserve, e.g. 4GiB: a plan is refused "
                 "when it leaves less (default 0; the reserve's fragmentation share is 5%, published peaks show "
                 "1.4-50%: docs/iteration-model.md)");
  cmd.add_option("--strategy", o.strategy, "Choose only within this family (" + text::join(sim::family_names()) + ")");
  cmd.add_option("--tp", o.tp,
                 "Tensor-parallel degree (Megatron-LM's, with sequence parallelism, inside a node): 0 searches 1 and "
                 "every degree an NVLink node allows; 1 keeps plans burst run can run")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  cmd.add_option("--dp", o.dp,
                 "Data-parallel degree (replicas of the tensor x context-parallel world, outermost, each on its "
                 "share of --global-batch): 0 searches every divisor of the batch the cluster splits evenly")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  cmd.add_flag("--fp8-linears", o.fp8_linears,
               "Price the layers' linear layers as FP8 GEMMs (TransformerEngine's fp8_autocast, torchao's float8; "
               "GPUs with FP8 tensor cores): the plan records it and the exports write it; burst run runs bf16 or "
               "fp32 GEMMs only");
  cmd.add_option("--checkpoint", o.checkpoint,
                 "Activation checkpointing for every family: none, full or attn_stash (the attention output kept, "
                 "the rest recomputed), in place of the peers' defaults and of the policies burst's families search "
                 "(default: each family's own, docs/strategies.md)");
  cmd.add_option("--engine", o.engine, "Simulation engine: event (contention) or analytic (fast)")
      ->check(CLI::IsMember(sim::engine_names()))
      ->capture_default_str();
  cmd.add_option("--max-candidates", o.max_candidates, "Step budget: candidates scored at most")
      ->check(kAtLeastOne)
      ->capture_default_str();
}

}  // namespace burst::cli
