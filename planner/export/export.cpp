// From a plan to a framework's settings and notes (see export.hpp).
#include "planner/export/export.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "common/kernel_paths.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "planner/detail/export/equivalent.hpp"
#include "planner/detail/export/equivalent_cost.hpp"
#include "planner/detail/export/writers.hpp"
#include "planner/export/rules.hpp"
#include "simulator/attention/families.hpp"

namespace burst::exporter {
namespace {

std::string figures(const Predicted& p) {
  if (!p.runs) return p.reason;
  std::string out = fmt::format("{} a step, {:.1f} tokens/s per GPU, {} per GPU", units::human_duration(p.step_time_s),
                                p.tokens_per_s_per_gpu, units::human_bytes(p.memory_bytes));
  if (!p.fits) out += " (does not fit: " + p.reason + ")";
  return out;
}

// How an equivalent's memory was costed (equivalent_cost.hpp): the framework's family row, or
// burst's own and why.
std::string allocation_words(const Framework& framework) {
  const bool own = !framework.allocates_like.empty();
  const sim::FrameworkMemory memory =
      own ? sim::family_traits(framework.allocates_like).memory : sim::FrameworkMemory{};
  return fmt::format("as {} allocates ({}){}", own ? framework.title : "burst", sim::describe_allocation(memory),
                     framework.allocation_note.empty() ? "" : ": " + framework.allocation_note);
}

// The notes on what the framework runs instead of the plan, and what that costs; `cannot_run`
// says why the framework's equivalent cannot run on the plan's cluster ("" when it can).
std::vector<std::string> difference_notes(const plan::Plan& plan, const std::string& source, const Framework& framework,
                                          const Equivalent& equivalent, std::string& cannot_run) {
  std::vector<std::string> notes;
  if (plan.job.mask.kind != MaskKind::Causal) {
    notes.push_back(
        fmt::format("mask: the job's mask is {}; these settings leave the framework's causal default, "
                    "so give the mask in the model or the data",
                    to_string(plan.job.mask)));
  }
  if (plan.job.kernel_path != kernel_paths::kAuto) {
    notes.push_back(
        fmt::format("kernel path: the plan was priced for burst's {} attention kernels; {} runs its "
                    "own attention kernels",
                    plan.job.kernel_path, framework.title));
  }
  if (equivalent.deviations.empty()) {
    notes.push_back(fmt::format("{} runs the plan's strategy as it is ({})", framework.title,
                                describe_attention(equivalent.strategy)));
    return notes;
  }
  for (const Deviation& d : equivalent.deviations) {
    notes.push_back(fmt::format("{}: the plan asks {}; {} cannot: {}; written: {}", to_string(d.knob), d.asked,
                                framework.title, d.why, d.written));
  }
  if (!plan.cluster.is_object()) {
    notes.push_back("no prediction of the equivalent: the plan carries no cluster to simulate it on");
    return notes;
  }
  const Predicted ours = predict_strategy(plan, plan.strategy, source);
  const Predicted theirs = predict_strategy(plan, equivalent.strategy, source, framework.allocates_like,
                                            equivalent.linears, equivalent.fp8_library);
  if (!theirs.runs || !theirs.fits) cannot_run = theirs.reason;
  notes.push_back(fmt::format("predicted on the plan's cluster (default cost models): the plan ({}) {}",
                              plan.strategy.name, figures(ours)));
  std::string verdict;
  if (ours.runs && theirs.runs && theirs.tokens_per_s_per_gpu > 0) {
    verdict = fmt::format("; the plan is {:.2f}x its speed", ours.tokens_per_s_per_gpu / theirs.tokens_per_s_per_gpu);
  }
  const std::string allocation = theirs.runs ? "; memory " + allocation_words(framework) : "";
  notes.push_back(fmt::format("predicted on the plan's cluster (default cost models): the {} equivalent ({}) {}{}{}",
                              framework.title, describe_attention(equivalent.strategy), figures(theirs), allocation,
                              verdict));
  return notes;
}

}  // namespace

Exported export_plan(const plan::Plan& plan, const std::string& source, std::string_view framework_name,
                     std::string_view field, bool force, int nemo_version) {
  const Framework& framework = find_framework(framework_name, field);
  if (nemo_version != 1 && nemo_version != 2) {
    throw Error(Problem{"--nemo-version", fmt::format("{}", nemo_version), "1 or 2",
                        "2 writes NeMo 2's Python recipe, 1 NeMo 1.0's YAML"});
  }
  const Equivalent equivalent = nearest_equivalent(plan, framework);
  Exported out;
  out.field = std::string(field) + " " + framework.name;
  std::string cannot_run;
  out.notes = difference_notes(plan, source, framework, equivalent, cannot_run);
  // Why the framework cannot run it, one reason after another; refused, or with --force
  // written with the reasons as the file's first line.
  std::vector<std::string> reasons;
  if (!cannot_run.empty()) {
    reasons.push_back(fmt::format("{} cannot run this plan on its cluster: its equivalent ({}) {}", framework.title,
                                  describe_attention(equivalent.strategy), cannot_run));
    if (!force) {
      out.refused = reasons.front();
      return out;
    }
  }
  std::set<int> nodes;
  for (const plan::RankPlacement& r : plan.ranks) nodes.insert(r.node);
  const int node_count = std::max(1, static_cast<int>(nodes.size()));
  const auto write = [&] {
    const std::string warning =
        reasons.empty() ? "" : "WARNING: " + text::join(reasons, "; ") + " (written with --force)";
    return framework.write(ExportInput{plan, source, framework, equivalent.strategy,
                                       equivalent.linears == sim::LinearPrecision::Fp8, out.notes, node_count,
                                       static_cast<int>(plan.ranks.size()) / node_count, warning, nemo_version});
  };
  out.text = write();
  // The framework's own rules (rules.hpp), checked on what was written: a breach is an export
  // the framework would stop at start.
  const RuleContext context{static_cast<int>(plan.ranks.size()), plan.job.model.heads, plan.job.model.kv_heads,
                            plan.job.batch};
  const std::vector<std::string> broken = check_rules(framework.name, out.text, context);
  if (broken.empty()) return out;
  reasons.push_back(
      fmt::format("{} would stop at start: its settings break {}", framework.title, text::join(broken, "; ")));
  if (!force) {
    out.text.clear();
    out.refused = text::join(reasons, "; ");
    return out;
  }
  out.text = write();
  return out;
}

void throw_if_refused(const Exported& exported) {
  if (exported.refused.empty()) return;
  throw Error(Problem{exported.field, exported.refused, "",
                      "the notes say what it runs instead; plan within what it can run (burst plan --strategy, --tp), "
                      "or write it anyway with --force"});
}

}  // namespace burst::exporter
