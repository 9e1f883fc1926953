// Writing a plan as ordered JSON (docs/plan-format.md).
//
// Keys are inserted in the documented order and nlohmann's ordered_json keeps that order, so
// the same Plan always dumps to the same bytes; doubles are written with enough digits to
// read back exactly, which is what makes plan_from_json(to_json(p)) == p hold. Enums use the
// canonical spellings of common/parallelism.hpp, the same words the parser accepts.
#include "common/kernel_paths.hpp"
#include "plan/plan.hpp"

namespace burst::plan {
namespace {

Json model_json(const ModelSpec& m) {
  Json j = Json::object();
  j["name"] = m.name;
  j["layers"] = m.layers;
  j["hidden"] = m.hidden;
  j["ffn"] = m.ffn;
  j["heads"] = m.heads;
  j["kv_heads"] = m.kv_heads;
  j["head_dim"] = m.head_dim;
  j["vocab"] = m.vocab;
  j["gated_mlp"] = m.gated_mlp;
  j["activation"] = m.activation;
  j["rope_base"] = m.rope_base;
  j["qkv_bias"] = m.qkv_bias;
  return j;
}

Json job_json(const Job& job) {
  Json j = Json::object();
  j["model"] = model_json(job.model);
  j["seq_len"] = job.seq;
  j["batch"] = job.batch;
  j["dtype"] = job.dtype;
  if (!job.linears.empty()) j["linears"] = job.linears;
  j["mask"] = to_string(job.mask);
  j["memory_budget_bytes"] = job.memory_budget_bytes;
  if (job.memory_margin_bytes > 0) j["memory_margin_bytes"] = job.memory_margin_bytes;
  if (!job.only_family.empty()) j["only_family"] = job.only_family;
  if (job.only_tp > 0) j["only_tp"] = job.only_tp;
  if (job.only_dp > 0) j["only_dp"] = job.only_dp;
  if (!job.only_checkpoint.empty()) j["only_checkpoint"] = job.only_checkpoint;
  if (job.kernel_path != kernel_paths::kAuto) j["kernel_path"] = job.kernel_path;
  return j;
}

Json strategy_json(const Strategy& s) {
  Json j = Json::object();
  j["name"] = s.name;
  j["tp"] = s.tp;
  j["cp"] = s.cp;
  j["dp"] = s.dp;
  j["micro_batch"] = s.micro_batch;
  j["ulysses"] = s.ulysses;
  j["ring"] = Json{{"kind", to_string(s.ring)}, {"inner", s.inner}, {"outer", s.outer}};
  j["layout"] = to_string(s.layout);
  j["backward"] = to_string(s.backward);
  j["dkv_bytes"] = s.dkv_bytes;
  j["dq_bytes"] = s.dq_bytes;
  j["overlap"] = s.overlap;
  j["checkpoint"] = Json{{"policy", to_string(s.checkpoint.policy)}, {"kept_fraction", s.checkpoint.kept_fraction}};
  j["lm_head"] = Json{{"chunks", s.lm_head_chunks}};
  j["zero"] = Json{{"stage", s.zero.stage}, {"offload", s.zero.offload}};
  return j;
}

Json items_json(const std::vector<Item>& items, Json j = Json::object()) {
  for (const auto& item : items) j[item.name] = item.value;
  return j;
}

Json prediction_json(const Prediction& p) {
  Json j = Json::object();
  j["step_time_s"] = p.step_time_s;
  j["tokens_per_s_per_gpu"] = p.tokens_per_s_per_gpu;
  j["mfu"] = p.mfu;
  j["exposed_comm_s"] = p.exposed_comm_s;
  j["memory_bytes_per_gpu"] = items_json(p.memory_bytes, Json{{"total", p.memory_total_bytes}});
  j["time_s"] = items_json(p.time_s);
  j["comm_bytes"] = Json{{"intra", p.comm_bytes_intra}, {"inter", p.comm_bytes_inter}};
  j["attention_layer"] = Json{{"forward_s", p.attention_forward_s}, {"backward_s", p.attention_backward_s}};
  j["passes"] = Json{{"forward_s", p.forward_pass_s}, {"backward_s", p.backward_pass_s}};
  return j;
}

Json world_json(const std::vector<RankPlacement>& ranks) {
  Json list = Json::array();
  for (const auto& r : ranks) list.push_back(Json{{"rank", r.rank}, {"node", r.node}, {"local", r.local}});
  return Json{{"size", ranks.size()}, {"ranks", std::move(list)}};
}

Json rings_json(const std::vector<Ring>& rings) {
  Json list = Json::array();
  for (const auto& ring : rings)
    list.push_back(
        Json{{"level", ring.level}, {"tp", ring.tp}, {"dp", ring.dp}, {"member", ring.member}, {"order", ring.order}});
  return list;
}

Json alternatives_json(const std::vector<Alternative>& alternatives) {
  Json list = Json::array();
  for (const auto& a : alternatives) {
    Json j = Json::object();
    j["strategy"] = a.strategy.name;
    j["config"] = strategy_json(a.strategy);
    j["feasible"] = a.feasible;
    j["reason"] = a.reason;
    j["predicted"] = prediction_json(a.predicted);
    list.push_back(std::move(j));
  }
  return list;
}

}  // namespace

Json to_json(const Plan& plan) {
  Json j = Json::object();
  j["schema"] = kSchema;
  j["meta"] = Json{{"generator", plan.generator},
                   {"topology", plan.topology_name},
                   {"topology_hash", plan.topology_hash},
                   {"candidates_evaluated", plan.candidates_evaluated}};
  j["job"] = job_json(plan.job);
  j["strategy"] = strategy_json(plan.strategy);
  j["world"] = world_json(plan.ranks);
  j["rings"] = rings_json(plan.rings);
  j["predicted"] = prediction_json(plan.predicted);
  j["alternatives"] = alternatives_json(plan.alternatives);
  j["layouts"] = alternatives_json(plan.layouts);
  j["cluster"] = plan.cluster;
  return j;
}

}  // namespace burst::plan
