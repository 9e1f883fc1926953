// Reading a run's JSON for the report (see run_comparison.hpp): every field the comparison
// uses is looked up by its JSON pointer, so a missing or mistyped one is named exactly.
#include "planner/report/run_comparison.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"

namespace burst::planner {
namespace {

constexpr const char* kAttention = "attention (its rings, forward, recompute and backward)";
constexpr const char* kRecompute = "recompute";
constexpr const char* kLmHead = "LM head and loss";
constexpr const char* kZero = "ZeRO collectives (waited for)";
constexpr const char* kDense = "dense layers and the rest of the passes";
constexpr const char* kOptimizer = "optimizer";

// Which of the plan's time items (plan:/predicted/time_s) each measured part is the sum of.
struct Pairing {
  const char* part;
  std::vector<std::string> items;
};
const std::vector<Pairing>& pairings() {
  static const std::vector<Pairing> table = {{kAttention, {"attention_compute", "attention_exposed_comm"}},
                                             {kRecompute, {"recompute"}},
                                             {kLmHead, {"lm_head"}},
                                             {kZero, {"zero_exposed_comm"}},
                                             {kDense, {"dense_compute", "elementwise", "tp_exposed_comm"}},
                                             {kOptimizer, {"optimizer"}}};
  return table;
}

class Reader {
 public:
  Reader(const Json& doc, const std::string& source) : doc_(doc), source_(source) {}

  [[nodiscard]] bool has(const std::string& pointer) const { return doc_.contains(Json::json_pointer(pointer)); }
  [[nodiscard]] const Json& at(const std::string& pointer) const {
    const Json::json_pointer p(pointer);
    if (!doc_.contains(p)) fail(pointer, "missing");
    return doc_.at(p);
  }
  [[nodiscard]] double number(const std::string& pointer) const {
    const Json& v = at(pointer);
    if (!v.is_number()) fail(pointer, "not a number");
    return v.get<double>();
  }
  [[noreturn]] void fail(const std::string& pointer, const std::string& what) const {
    throw Error(Problem{source_ + ":" + pointer, what + " (is this the JSON of `burst run --json`?)", "",
                        "write it with: mpirun -np N burst run plan.json --steps 10 --json > run.json "
                        "(or --attention-only --json)"});
  }

 private:
  const Json& doc_;
  const std::string& source_;
};

// The run's parts, named as training_times() pairs them with the plan's items.
void read_training(const Reader& r, RunFigures& f) {
  f.kind = "training";
  const auto part = [&](const char* name, const std::string& pointer) {
    f.times.push_back({name, r.number(pointer), 0, true, false});
  };
  part("forward", "/measured/forward_s");
  part("backward", "/measured/backward_s");
  part(kAttention, "/measured/attention_s");
  part(kRecompute, "/measured/recompute_s");
  part(kLmHead, "/measured/loss_s");
  part(kZero, "/zero/collective_s");
  // Runs written before these were measured have neither: their plan items stay predicted only.
  if (r.has("/measured/dense_s")) part(kDense, "/measured/dense_s");
  if (r.has("/measured/optimizer_s")) part(kOptimizer, "/measured/optimizer_s");
  f.times.push_back({"step (median)", r.number("/measured/step_s_median"), r.number("/predicted/step_time_s")});
  const Json& items = r.at("/memory_items");
  if (!items.is_array()) r.fail("/memory_items", "not an array");
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string at = fmt::format("/memory_items/{}", i);
    const Json& name = r.at(at + "/item");
    if (!name.is_string()) r.fail(at + "/item", "not a string");
    const Json& measured = r.at(at + "/measured");
    if (!measured.is_null() && !measured.is_number()) r.fail(at + "/measured", "neither a number nor null");
    f.memory.push_back({name.get<std::string>(), measured.is_number() ? measured.get<double>() : 0.0,
                        r.number(at + "/predicted"), measured.is_number(), true});
  }
}

void read_attention(const Reader& r, const Json& doc, RunFigures& f) {
  f.kind = "attention only";
  for (const char* phase : {"forward", "backward"}) {
    f.times.push_back(
        {phase, r.number(fmt::format("/measured/{}_s", phase)), r.number(fmt::format("/predicted/{}_s", phase))});
  }
  const bool simulated = doc.contains(Json::json_pointer("/comm_bytes/simulated_by_level"));
  for (const char* phase : {"forward", "backward"}) {
    for (const char* level : {"flat", "intra", "inter"}) {
      const double measured = r.number(fmt::format("/comm_bytes/by_level/{}/{}", phase, level));
      const double predicted =
          simulated ? r.number(fmt::format("/comm_bytes/simulated_by_level/{}/{}", phase, level)) : 0;
      if (measured > 0 || predicted > 0)
        f.level_bytes.push_back({fmt::format("{} {}", phase, level), measured, predicted, true, simulated});
    }
  }
}

}  // namespace

std::vector<Compared> training_times(const RunFigures& run, const plan::Plan& plan) {
  std::vector<Compared> out = run.times;
  // The passes, where the plan predicts them (plans written before it did say 0).
  for (Compared& row : out) {
    const double pass = row.name == "forward"    ? plan.predicted.forward_pass_s
                        : row.name == "backward" ? plan.predicted.backward_pass_s
                                                 : 0.0;
    if (pass > 0) {
      row.predicted = pass;
      row.has_predicted = true;
    }
  }
  std::vector<bool> used(plan.predicted.time_s.size(), false);
  for (Compared& row : out) {
    for (const Pairing& pairing : pairings()) {
      if (row.name != pairing.part) continue;
      for (std::size_t i = 0; i < plan.predicted.time_s.size(); ++i) {
        const plan::Item& item = plan.predicted.time_s[i];
        if (std::find(pairing.items.begin(), pairing.items.end(), item.name) == pairing.items.end()) continue;
        row.predicted += item.value;
        row.has_predicted = true;
        used[i] = true;
      }
    }
  }
  for (std::size_t i = 0; i < plan.predicted.time_s.size(); ++i) {
    const plan::Item& item = plan.predicted.time_s[i];
    if (!used[i]) out.push_back({item.name + " (plan)", 0, item.value, false, true});
  }
  return out;
}

RunFigures read_run(const Json& doc, const std::string& source) {
  const Reader r(doc, source);
  RunFigures f;
  if (!doc.is_object()) r.fail("", "not a JSON object");
  if (doc.contains("losses")) {
    read_training(r, f);
  } else if (doc.contains("comm_bytes")) {
    read_attention(r, doc, f);
  } else {
    r.fail("/losses", "missing, and so is /comm_bytes: neither a training run nor an attention-only run");
  }
  return f;
}

}  // namespace burst::planner
