// Whether a training strategy can run a job on a topology, and the two quantities every other
// part starts from: the attention shape of the job and the tokens each GPU carries.
//
// A strategy that cannot run is a result (IterationSimulation::not_applicable), not an error:
// the planner lists it with its reason. The reasons are check_applicable()'s (heads, ring and
// layout divisibility) plus the training knobs:
//   seq_stash keeps "the later tokens of every rank", which is "the later part of the sequence"
//     only under the striped layout, and keeps a fraction strictly between 0 and 1 (0 is full
//     recompute, 1 is attn_stash);
//   the LM head runs in 1 .. local-token chunks;
//   ZeRO stages are 0..3, and offloading the optimizer needs it sharded (stage >= 1);
//   the data-parallel replicas run whole micro-batches: dp x micro_batch divides the batch;
//   FP8 linear layers need FP8 tensor cores (fp8_linears_problem).
#include <algorithm>

#include <fmt/format.h>

#include "simulator/training/training.hpp"

namespace burst::sim {

AttentionShape attention_shape(const TrainingJob& job, const TrainingKnobs& knobs) {
  AttentionShape shape;
  const int tp = std::max(1, knobs.tp);
  shape.heads = job.model.heads / tp;
  shape.kv_heads = job.model.kv_heads / tp;
  shape.tensor_parallel = tp;
  shape.data_parallel = std::max(1, knobs.dp);
  shape.head_dim = job.model.head_dim;
  shape.seq = job.seq;
  shape.batch = std::max(1, knobs.micro_batch);
  shape.dtype_bytes = job.dtype_bytes;
  return shape;
}

double local_tokens(const TrainingJob& job, const topo::Topology& topology, const TrainingKnobs& knobs) {
  const int replica_gpus = topology.gpu_count() / std::max(1, knobs.tp) / std::max(1, knobs.dp);
  return static_cast<double>(job.seq) * std::max(1, knobs.micro_batch) / std::max(1, replica_gpus);
}

int accumulation_steps(const TrainingJob& job, const TrainingKnobs& knobs) {
  return std::max(1, job.batch / std::max(1, knobs.dp * knobs.micro_batch));
}

std::string check_training(const TrainingJob& job, const TrainingStrategy& strategy, const topo::Topology& topology) {
  std::vector<Problem> problems;
  const int tp = strategy.tp;
  if (tp < 1 || job.model.heads % tp != 0 || job.model.kv_heads % tp != 0) {
    problems.push_back(
        {"tp",
         fmt::format("tensor parallelism of {} over {} heads ({} KV heads)", tp, job.model.heads, job.model.kv_heads),
         "a degree dividing both head counts",
         "each tensor-parallel rank computes whole heads (Megatron-LM requires the query groups to "
         "divide too)"});
  }
  if (tp > 1 && job.model.ffn % tp != 0) {
    problems.push_back({"tp", fmt::format("tensor parallelism of {} over an MLP of width {}", tp, job.model.ffn),
                        "a degree dividing the MLP width", ""});
  }
  if (strategy.dp < 1 || strategy.micro_batch < 1 || job.batch % (strategy.dp * strategy.micro_batch) != 0) {
    problems.push_back({"dp",
                        fmt::format("{} sequences per step over {} replicas of micro-batches of {}", job.batch,
                                    strategy.dp, strategy.micro_batch),
                        "dp x micro_batch dividing the batch",
                        "every replica runs the same number of whole micro-batches"});
  }
  if (job.linears == LinearPrecision::Fp8) {
    if (auto problem = fp8_linears_problem(topology.gpu(), "linears")) problems.push_back(std::move(*problem));
  }
  const std::string attention =
      problems.empty() ? check_applicable(strategy.attention, attention_shape(job, strategy), job.mask, topology) : "";
  if (job.model.layers < 1 || job.model.hidden < 1 || job.model.ffn < 1 || job.model.vocab < 1) {
    problems.push_back({"model",
                        fmt::format("'{}' has {} layers, hidden {}, ffn {}, vocab {}", job.model.name, job.model.layers,
                                    job.model.hidden, job.model.ffn, job.model.vocab),
                        "at least 1 of each", ""});
  }
  const CheckpointConfig& ck = strategy.checkpoint;
  if (ck.policy == CheckpointPolicy::SeqStash) {
    if (strategy.attention.layout != Layout::Striped) {
      problems.push_back(
          {"checkpoint", fmt::format("seq_stash with the {} layout", to_string(strategy.attention.layout)),
           "the striped layout",
           "only a striped rank's earliest tokens are the sequence's earliest, which the recompute needs"});
    }
    if (!(ck.kept_fraction > 0 && ck.kept_fraction < 1)) {
      problems.push_back({"checkpoint", fmt::format("seq_stash keeping {} of the sequence", ck.kept_fraction),
                          "a kept_fraction strictly between 0 and 1", "0 is the full policy, 1 is attn_stash"});
    }
  }
  const double c = local_tokens(job, topology, strategy);
  if (strategy.lm_head_chunks < 1 || static_cast<double>(strategy.lm_head_chunks) > c) {
    problems.push_back({"lm_head.chunks", fmt::format("{} chunks of {} local tokens", strategy.lm_head_chunks, c),
                        fmt::format("1 (logits whole) to {} (one token per chunk)", c), ""});
  }
  if (strategy.zero.stage < 0 || strategy.zero.stage > 3) {
    problems.push_back({"zero.stage", fmt::format("ZeRO stage {}", strategy.zero.stage), "0, 1, 2 or 3", ""});
  }
  if (strategy.zero.offload && strategy.zero.stage < 1) {
    problems.push_back({"zero.offload", "offloading a replicated optimizer (stage 0)", "stage 1, 2 or 3",
                        "offload moves each GPU's optimizer shard to its host"});
  }
  std::string reasons = attention;
  for (const Problem& p : problems) {
    if (!reasons.empty()) reasons += "; ";
    reasons += p.to_string();
  }
  return reasons;
}

}  // namespace burst::sim
