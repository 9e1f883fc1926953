#include "runtime/executor/attention_report.hpp"

namespace burst::rt {
namespace {

Json phase_json(const PhasePair& p) { return {{"forward", p.forward}, {"backward", p.backward}}; }

Json levels_json(const LevelBytes& bytes) {
  Json out = Json::object();
  for (int level = 0; level < kRingLevelCount; ++level)
    out[std::string(to_string(static_cast<RingLevel>(level)))] = bytes[static_cast<std::size_t>(level)];
  return out;
}

Json phase_levels_json(const PhaseLevelBytes& b) {
  return {{"forward", levels_json(b.forward)}, {"backward", levels_json(b.backward)}};
}

}  // namespace

Json to_json(const TensorErrors& e) { return {{"out", e.out}, {"dq", e.dq}, {"dk", e.dk}, {"dv", e.dv}}; }

PhasePair AttentionReport::Measured::overlap() const {
  return {compute_s.forward > 0 ? time_s.forward / compute_s.forward : 0.0,
          compute_s.backward > 0 ? time_s.backward / compute_s.backward : 0.0};
}

Json AttentionReport::to_json() const {
  Json report;
  report["plan"] = {{"strategy", plan.strategy}, {"ranks", plan.ranks},   {"ulysses", plan.ulysses},
                    {"ring", plan.ring},         {"layout", plan.layout}, {"backward", plan.backward},
                    {"mask", plan.mask},         {"tp", plan.tp},         {"dp", plan.dp}};
  report["run"] = {{"dry_run", run.dry_run},   {"seq", run.seq},
                   {"heads", run.heads},       {"kv_heads", run.kv_heads},
                   {"head_dim", run.head_dim}, {"seed", run.seed},
                   {"warmups", run.warmups},   {"repeats", run.repeats},
                   {"overlap", run.overlap},   {"precision", precision_json(run.precision)},
                   {"device", run.device}};
  report["comm_bytes"] = {{"forward", comm_bytes.total.forward},
                          {"backward", comm_bytes.total.backward},
                          {"by_level", phase_levels_json(comm_bytes.by_level)},
                          {"ulysses", phase_json(comm_bytes.ulysses)}};
  if (comm_bytes.simulated_by_level)
    report["comm_bytes"]["simulated_by_level"] = phase_levels_json(*comm_bytes.simulated_by_level);
  report["messages"] = {{"forward_sent", messages.sent.forward},
                        {"forward_received", messages.received.forward},
                        {"backward_sent", messages.sent.backward},
                        {"backward_received", messages.received.backward},
                        {"blocks_computed_forward", messages.blocks_computed.forward},
                        {"blocks_computed_backward", messages.blocks_computed.backward}};
  const PhasePair overlap = measured.overlap();
  report["measured"] = {{"forward_s", measured.time_s.forward},
                        {"backward_s", measured.time_s.backward},
                        {"forward_compute_s", measured.compute_s.forward},
                        {"backward_compute_s", measured.compute_s.backward},
                        {"forward_overlap", overlap.forward},
                        {"backward_overlap", overlap.backward},
                        {"forward_fastest_s", measured.fastest_s.forward},
                        {"forward_slowest_s", measured.slowest_s.forward},
                        {"backward_fastest_s", measured.fastest_s.backward},
                        {"backward_slowest_s", measured.slowest_s.backward}};
  report["predicted"] = {{"forward_s", predicted_s.forward}, {"backward_s", predicted_s.backward}};
  if (check) {
    report["check"] = {
        {"max_abs_err", rt::to_json(check->max_abs_err)}, {"max_rel_err", rt::to_json(check->max_rel_err)},
        {"rms_rel_err", rt::to_json(check->rms_rel_err)}, {"tolerance", check->tolerance},
        {"tolerance_kind", check->tolerance_kind()},      {"passed", check->passed}};
  }
  return report;
}

}  // namespace burst::rt
