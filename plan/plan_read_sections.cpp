// Reading the parts of a plan that stand alone: meta, job (model, sequence, mask), a
// strategy's knobs and a prediction. Ranges follow what the runtime can execute: a double
// ring must factor cp as inner x outer, the sequence-level stash keeps a fraction strictly
// between 0 and 1 of the local sequence (0 is "attn_stash nothing", 1 is "none"), ZeRO has
// stages 0 to 3, and grouped-query attention needs heads to be a multiple of kv_heads.
#include <fmt/format.h>

#include "common/kernel_paths.hpp"
#include "plan/detail/plan_reader.hpp"

namespace burst::plan::detail {

bool PlanReader::non_negative(const Json& obj, std::string_view pointer, std::string_view key, double& out) {
  const auto value = reader_.number(obj, pointer, key);
  if (!value) return false;
  if (!(*value >= 0)) {
    reader_.problem(JsonReader::child(pointer, key), fmt::format("{} is negative", *value), "a number >= 0");
    return false;
  }
  out = *value;
  return true;
}

bool PlanReader::text(const Json& obj, std::string_view pointer, std::string_view key, std::string& out) {
  const auto value = reader_.name(obj, pointer, key);
  if (value) out = *value;
  return value.has_value();
}

bool PlanReader::flag(const Json& obj, std::string_view pointer, std::string_view key, bool& out) {
  const auto value = reader_.boolean(obj, pointer, key);
  if (value) out = *value;
  return value.has_value();
}

const Json* PlanReader::section(const Json& obj, std::string_view pointer, std::string_view key,
                                const std::vector<std::string>& keys) {
  const Json* j = reader_.object(obj, pointer, key);
  if (j) reader_.reject_unknown_keys(*j, JsonReader::child(pointer, key), keys);
  return j;
}

void PlanReader::meta(const Json& j, std::string_view pointer, Plan& plan) {
  text(j, pointer, "generator", plan.generator);
  text(j, pointer, "topology", plan.topology_name);
  text(j, pointer, "topology_hash", plan.topology_hash);
  integer(j, pointer, "candidates_evaluated", plan.candidates_evaluated, 0, kMaxInt);
}

void PlanReader::job(const Json& j, std::string_view pointer, Job& job) {
  const std::string model_at = JsonReader::child(pointer, "model");
  if (const Json* m = section(j, pointer, "model",
                              {"name", "layers", "hidden", "ffn", "heads", "kv_heads", "head_dim", "vocab", "gated_mlp",
                               "activation", "rope_base", "qkv_bias"})) {
    ModelSpec& spec = job.model;
    text(*m, model_at, "name", spec.name);
    integer(*m, model_at, "layers", spec.layers, 1, kMaxInt);
    integer(*m, model_at, "hidden", spec.hidden, 1, kMaxInt);
    integer(*m, model_at, "ffn", spec.ffn, 1, kMaxInt);
    const bool heads = integer(*m, model_at, "heads", spec.heads, 1, kMaxInt);
    const bool kv_heads = integer(*m, model_at, "kv_heads", spec.kv_heads, 1, kMaxInt);
    integer(*m, model_at, "head_dim", spec.head_dim, 1, kMaxInt);
    integer(*m, model_at, "vocab", spec.vocab, 1, INT64_MAX);
    flag(*m, model_at, "gated_mlp", spec.gated_mlp);
    if (const auto act = reader_.choice(*m, model_at, "activation", {"silu", "gelu"})) spec.activation = *act;
    // Optional: plans written before these two fields have Llama's base and no biases.
    if (const auto base = reader_.number(*m, model_at, "rope_base", false); base && !(*base > 1)) {
      reader_.problem(JsonReader::child(model_at, "rope_base"), fmt::format("{} is not a rotary base", *base),
                      "a number above 1, e.g. 10000");
    } else if (base) {
      spec.rope_base = *base;
    }
    if (const auto bias = reader_.boolean(*m, model_at, "qkv_bias", false)) spec.qkv_bias = *bias;
    if (heads && kv_heads && spec.heads % spec.kv_heads != 0) {
      reader_.problem(JsonReader::child(model_at, "kv_heads"),
                      fmt::format("{} heads do not split into {} KV-head groups", spec.heads, spec.kv_heads),
                      "a divisor of heads", "grouped-query attention shares each KV head among heads / kv_heads heads");
    }
  }
  integer(j, pointer, "seq_len", job.seq, 1, INT64_MAX);
  integer(j, pointer, "batch", job.batch, 1, kMaxInt);
  if (const auto dtype = reader_.choice(j, pointer, "dtype", {"bf16", "fp16", "fp32"})) job.dtype = *dtype;
  if (j.contains("linears")) {
    if (const auto linears = reader_.choice(j, pointer, "linears", {"fp8"})) job.linears = *linears;
  }
  spelled(j, pointer, "mask", job.mask, parse_mask);
  non_negative(j, pointer, "memory_budget_bytes", job.memory_budget_bytes);
  if (j.contains("memory_margin_bytes")) non_negative(j, pointer, "memory_margin_bytes", job.memory_margin_bytes);
  if (j.contains("only_tp")) integer(j, pointer, "only_tp", job.only_tp, 1, kMaxCount);
  if (j.contains("only_dp")) integer(j, pointer, "only_dp", job.only_dp, 1, kMaxCount);
  if (j.contains("only_checkpoint")) {
    if (const auto policy = reader_.choice(j, pointer, "only_checkpoint", checkpoint_policies_of_every_family())) {
      job.only_checkpoint = *policy;
    }
  }
  if (j.contains("kernel_path")) {
    if (const auto path = reader_.choice(j, pointer, "kernel_path", kernel_paths::choice_names())) {
      job.kernel_path = *path;
    }
  }
  if (j.contains("only_family") && text(j, pointer, "only_family", job.only_family) && job.only_family.empty()) {
    reader_.problem(JsonReader::child(pointer, "only_family"), "empty family", "a family such as burst, or no key");
  }
}

StrategySizes PlanReader::strategy(const Json& j, std::string_view pointer, Strategy& s) {
  StrategySizes sizes;
  if (text(j, pointer, "name", s.name) && s.name.empty()) {
    reader_.problem(JsonReader::child(pointer, "name"), "empty strategy name", "a family such as burst, megatron-cp");
  }
  if (version_ >= 2) {
    sizes.tp.reset();
    sizes.dp.reset();
    if (integer(j, pointer, "tp", s.tp, 1, kMaxCount)) sizes.tp = s.tp;
    if (integer(j, pointer, "dp", s.dp, 1, kMaxCount)) sizes.dp = s.dp;
    integer(j, pointer, "micro_batch", s.micro_batch, 1, kMaxInt);
  } else {
    for (const char* key : {"tp", "dp", "micro_batch"}) {
      if (j.contains(key)) {
        reader_.problem(JsonReader::child(pointer, key), fmt::format("burst.plan/1 has no \"{}\"", key),
                        "\"schema\": \"burst.plan/2\" for a plan with tensor or data parallelism", "");
      }
    }
  }
  if (integer(j, pointer, "cp", s.cp, 1, kMaxCount)) sizes.cp = s.cp;
  if (integer(j, pointer, "ulysses", s.ulysses, 1, kMaxCount)) sizes.ulysses = s.ulysses;

  const std::string ring_at = JsonReader::child(pointer, "ring");
  if (const Json* ring = section(j, pointer, "ring", {"kind", "inner", "outer"})) {
    const bool kind = spelled(*ring, ring_at, "kind", s.ring, parse_ring_kind);
    if (integer(*ring, ring_at, "inner", s.inner, 1, kMaxCount)) sizes.inner = s.inner;
    if (integer(*ring, ring_at, "outer", s.outer, 1, kMaxCount)) sizes.outer = s.outer;
    if (kind && s.ring == RingKind::Double && sizes.cp && sizes.inner && sizes.outer &&
        *sizes.inner * *sizes.outer != *sizes.cp) {
      reader_.problem(ring_at,
                      fmt::format("double ring of inner x outer = {} x {} = {} ranks, but cp is {}", s.inner, s.outer,
                                  s.inner * s.outer, s.cp),
                      "inner x outer == cp", "inner is the GPUs of a node in the ring, outer the nodes");
      sizes.inner.reset();  // the rings cannot be checked against sizes that contradict each other
      sizes.outer.reset();
    }
  }
  spelled(j, pointer, "layout", s.layout, parse_layout);
  spelled(j, pointer, "backward", s.backward, parse_backward_mode);
  integer(j, pointer, "dkv_bytes", s.dkv_bytes, 1, 8);
  integer(j, pointer, "dq_bytes", s.dq_bytes, 1, 8);
  flag(j, pointer, "overlap", s.overlap);

  const std::string checkpoint_at = JsonReader::child(pointer, "checkpoint");
  if (const Json* c = section(j, pointer, "checkpoint", {"policy", "kept_fraction"})) {
    const bool policy = spelled(*c, checkpoint_at, "policy", s.checkpoint.policy, parse_checkpoint_policy);
    if (non_negative(*c, checkpoint_at, "kept_fraction", s.checkpoint.kept_fraction)) {
      const bool stash = policy && s.checkpoint.policy == CheckpointPolicy::SeqStash;
      if (stash && !(s.checkpoint.kept_fraction > 0 && s.checkpoint.kept_fraction < 1)) {
        reader_.problem(JsonReader::child(checkpoint_at, "kept_fraction"),
                        fmt::format("{} is out of range for seq_stash", s.checkpoint.kept_fraction),
                        "greater than 0 and less than 1",
                        "keeping all of the sequence is policy \"none\", keeping none of it \"full\"");
      } else if (!stash && s.checkpoint.kept_fraction > 1) {
        reader_.problem(JsonReader::child(checkpoint_at, "kept_fraction"),
                        fmt::format("{} is out of range", s.checkpoint.kept_fraction),
                        "0 to 1 (used by seq_stash only)");
      }
    }
  }
  if (const Json* lm = section(j, pointer, "lm_head", {"chunks"})) {
    integer(*lm, JsonReader::child(pointer, "lm_head"), "chunks", s.lm_head_chunks, 1, kMaxInt);
  }
  if (const Json* zero = section(j, pointer, "zero", {"stage", "offload"})) {
    integer(*zero, JsonReader::child(pointer, "zero"), "stage", s.zero.stage, 0, 3);
    flag(*zero, JsonReader::child(pointer, "zero"), "offload", s.zero.offload);
  }
  return sizes;
}

namespace {

// A breakdown object {"name": value, ...} in the producer's order; `skip` is a key read apart.
std::vector<Item> read_items(PlanReader& r, const Json& obj, std::string_view pointer,
                             std::optional<std::string_view> skip) {
  std::vector<Item> items;
  for (const auto& [name, value] : obj.items()) {
    if (name == skip) continue;
    if (!r.json().printable(JsonReader::child(pointer, name), name)) continue;
    Item item{name, 0};
    if (r.non_negative(obj, pointer, name, item.value)) items.push_back(std::move(item));
  }
  return items;
}

}  // namespace

void PlanReader::prediction(const Json& j, std::string_view pointer, Prediction& p) {
  non_negative(j, pointer, "step_time_s", p.step_time_s);
  non_negative(j, pointer, "tokens_per_s_per_gpu", p.tokens_per_s_per_gpu);
  non_negative(j, pointer, "mfu", p.mfu);
  non_negative(j, pointer, "exposed_comm_s", p.exposed_comm_s);
  const std::string memory_at = JsonReader::child(pointer, "memory_bytes_per_gpu");
  if (const Json* memory = reader_.object(j, pointer, "memory_bytes_per_gpu")) {
    non_negative(*memory, memory_at, "total", p.memory_total_bytes);
    p.memory_bytes = read_items(*this, *memory, memory_at, "total");
  }
  if (const Json* time = reader_.object(j, pointer, "time_s")) {
    p.time_s = read_items(*this, *time, JsonReader::child(pointer, "time_s"), std::nullopt);
  }
  if (const Json* comm = section(j, pointer, "comm_bytes", {"intra", "inter"})) {
    non_negative(*comm, JsonReader::child(pointer, "comm_bytes"), "intra", p.comm_bytes_intra);
    non_negative(*comm, JsonReader::child(pointer, "comm_bytes"), "inter", p.comm_bytes_inter);
  }
  if (const Json* layer = section(j, pointer, "attention_layer", {"forward_s", "backward_s"})) {
    non_negative(*layer, JsonReader::child(pointer, "attention_layer"), "forward_s", p.attention_forward_s);
    non_negative(*layer, JsonReader::child(pointer, "attention_layer"), "backward_s", p.attention_backward_s);
  }
  // Optional: plans written before the passes were predicted have none (the report then says so).
  if (const Json* passes = reader_.object(j, pointer, "passes", false)) {
    reader_.reject_unknown_keys(*passes, JsonReader::child(pointer, "passes"), {"forward_s", "backward_s"});
    non_negative(*passes, JsonReader::child(pointer, "passes"), "forward_s", p.forward_pass_s);
    non_negative(*passes, JsonReader::child(pointer, "passes"), "backward_s", p.backward_pass_s);
  }
}

}  // namespace burst::plan::detail
