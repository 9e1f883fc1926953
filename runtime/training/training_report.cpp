#include "runtime/training/training_report.hpp"

namespace burst::rt {
namespace {

Json column_json(const MemoryColumn& c) {
  const ZeroModel::Resident& held = c.model_state;
  return {
      {"model_state", held.params + held.gradients + held.optimizer},
      {"model_state_by_use", {{"params", held.params}, {"gradients", held.gradients}, {"optimizer", held.optimizer}}},
      {"at_peak", memory_uses_json(c.at_peak)},
      {"peak_by_use", memory_uses_json(c.peak_by_use)}};
}

Json optional_json(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

Json item_json(const MemoryItemRow& row) {
  return {{"item", row.item},
          {"predicted", row.predicted},
          {"measured", optional_json(row.host.measured)},
          {"ratio", optional_json(row.host.ratio)},
          {"note", row.host.note},
          {"on_gpu", optional_json(row.on_gpu.measured)},
          {"on_gpu_ratio", optional_json(row.on_gpu.ratio)},
          {"on_gpu_note", row.on_gpu.note}};
}

Json zero_json(const ZeroSummary& z) {
  Json collectives = Json::array();
  for (const ZeroCollective& c : z.collectives_per_step)
    collectives.push_back({{"collective", c.collective}, {"of", c.of}, {"calls", c.calls}, {"bytes", c.bytes}});
  return {{"stage", z.stage},
          {"ranks", z.ranks},
          {"total_floats", z.total_floats},
          {"shard_floats", z.shard_floats},
          {"state", z.state},
          {"offload", z.offload ? Json(*z.offload) : Json(false)},
          {"collective_s", z.collective_s},
          {"collectives_per_step", collectives}};
}

Json check_json(const TrainingCheck& c) {
  Json by_tensor = Json::object();
  for (const auto& [name, error] : c.rel_err_grad_by_tensor) by_tensor[name] = error;
  return {{"loss", c.loss},
          {"reference_loss", c.reference_loss},
          {"loss_rel_err", c.loss_rel_err},
          {"max_rel_err_grad", c.max_rel_err_grad},
          {"worst_tensor", c.worst_tensor},
          {"grad_norm", c.grad_norm},
          {"reference_grad_norm", c.reference_grad_norm},
          {"grad_norm_rel_err", c.grad_norm_rel_err},
          {"rel_err_grad_by_tensor", by_tensor},
          {"tolerance", c.tolerance},
          {"passed", c.passed}};
}

}  // namespace

Json memory_uses_json(const MemoryLedger::Breakdown& b) {
  Json j = Json::object();
  for (std::size_t i = 0; i < kMemoryUseCount; ++i) j[std::string(to_string(static_cast<MemoryUse>(i)))] = b[i];
  return j;
}

Json to_json(const ModelSpec& m) {
  return {{"name", m.name},   {"layers", m.layers},     {"hidden", m.hidden},     {"ffn", m.ffn},
          {"heads", m.heads}, {"kv_heads", m.kv_heads}, {"head_dim", m.head_dim}, {"vocab", m.vocab}};
}

Json to_json(const LrSchedule& s) {
  Json out = {{"peak", s.peak}, {"warmup_steps", s.warmup_steps}, {"decay", to_string(s.decay)}};
  if (s.decay == LrDecay::Cosine) {
    out["decay_steps"] = s.decay_steps;
    out["floor_ratio"] = s.floor_ratio;
  }
  return out;
}

Json to_json(const DeviceTraffic& t) {
  return {{"host_to_device_bytes", t.host_to_device_bytes},
          {"device_to_host_bytes", t.device_to_host_bytes},
          {"host_waits", t.host_waits},
          {"device_synchronizations", t.device_synchronizations},
          {"driver_allocations", t.driver_allocations},
          {"host_page_faults", t.host_page_faults}};
}

DeviceTraffic device_traffic_from_json(const Json& j) {
  return {j.at("host_to_device_bytes").get<std::uint64_t>(), j.at("device_to_host_bytes").get<std::uint64_t>(),
          j.at("host_waits").get<std::uint64_t>(),           j.at("device_synchronizations").get<std::uint64_t>(),
          j.at("driver_allocations").get<std::uint64_t>(),   j.at("host_page_faults").get<std::uint64_t>()};
}

Json TrainingReport::to_json() const {
  Json report;
  report["plan"] = {{"strategy", plan.strategy},
                    {"ranks", plan.ranks},
                    {"ring", plan.ring},
                    {"layout", plan.layout},
                    {"backward", plan.backward},
                    {"mask", plan.mask},
                    {"checkpoint", plan.checkpoint},
                    {"kept_fraction", plan.kept_fraction},
                    {"lm_head_chunks", plan.lm_head_chunks},
                    {"tp", plan.tp},
                    {"dp", plan.dp},
                    {"batch", plan.batch},
                    {"micro_batch", plan.micro_batch},
                    {"micro_batches", plan.micro_batches}};
  report["run"] = {
      {"model", rt::to_json(run.model)},
      {"parameters", run.parameters},
      {"seq", run.seq},
      {"first_step", run.first_step},
      {"steps", run.steps},
      {"seed", run.seed},
      {"lr", run.lr},
      {"lr_schedule", rt::to_json(run.lr_schedule)},
      {"resumed_from", run.resumed_from},
      {"device", run.device},
      {"saved_to", run.saved_to},
      {"recomputed_rows_per_rank", run.recomputed_rows_per_rank},
      {"precision", precision_json(run.precision)},
      {"overlap", run.overlap},
      {"data", {{"source", run.data.source}, {"documents", run.data.documents}, {"bytes", run.data.bytes}}}};
  Json losses = Json::array(), times = Json::array(), tokens = Json::array(), norms = Json::array(),
       lrs = Json::array();
  for (const Step& s : steps) {
    losses.push_back(s.loss);
    times.push_back(s.step_s);
    tokens.push_back(s.tokens_per_s);
    norms.push_back(s.grad_norm);
    lrs.push_back(s.lr);
  }
  report["losses"] = losses;
  report["step_time_s"] = times;
  report["tokens_per_s"] = tokens;
  report["grad_norms"] = norms;
  report["lrs"] = lrs;
  report["peak_memory_bytes"] = peak_memory_bytes;
  report["peak_memory_bytes_by_rank"] = peak_memory_bytes_by_rank;
  report["memory"] = column_json(memory);
  report["memory_on_gpu"] = column_json(memory_on_gpu);
  report["memory_on_gpu"]["peak"] = peak_on_gpu;
  if (measured_by_cuda) {
    report["memory_on_gpu"]["measured_by_cuda"] = {{"pool_peak_bytes", measured_by_cuda->pool_peak_bytes},
                                                   {"device_used_bytes", measured_by_cuda->device_used_bytes},
                                                   {"device_total_bytes", measured_by_cuda->device_total_bytes}};
  }
  Json items = Json::array();
  for (const MemoryItemRow& row : memory_items) items.push_back(item_json(row));
  report["memory_items"] = items;
  report["zero"] = zero_json(zero);
  report["predicted_memory_bytes"] = predicted_memory_bytes;
  Json predicted_items = Json::object();
  for (const plan::Item& item : predicted_memory) predicted_items[item.name] = item.value;
  report["predicted_memory"] = predicted_items;
  report["measured"] = {{"step_s_median", measured.step_s_median},
                        {"forward_s", measured.forward_s},
                        {"backward_s", measured.backward_s},
                        {"recompute_s", measured.recompute_s},
                        {"attention_s", measured.attention_s},
                        {"loss_s", measured.loss_s},
                        {"dense_s", measured.dense_s},
                        {"optimizer_s", measured.optimizer_s},
                        {"sequence_parallel_bytes", measured.sequence_parallel_bytes}};
  report["predicted"] = {{"step_time_s", predicted_step_s}};
  report["device_traffic"] = {{"scope", "this process, all its ranks"},
                              {"first_step", rt::to_json(device_traffic.first_step)}};
  if (device_traffic.later_steps_max)
    report["device_traffic"]["later_steps_max"] = rt::to_json(*device_traffic.later_steps_max);
  if (check) report["check"] = check_json(*check);
  return report;
}

}  // namespace burst::rt
