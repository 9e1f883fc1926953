// Explaining a plan from its own figures (see explain.hpp).
#include "planner/explain.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/escape.hpp"
#include "common/units.hpp"

namespace burst::planner {
namespace {

// A memory use above this share of the budget makes memory the binding constraint.
constexpr double kNearlyFull = 0.95;

// A name or a reason of the plan as the terminal shows it (a plan built in code, or read by an
// older reader, may hold control characters).
std::string shown(const std::string& text) { return escape::terminal(text); }

std::string describe(const plan::Strategy& s) {
  std::string ring = s.ring == RingKind::Double ? fmt::format("double ring {}x{}", s.inner, s.outer)
                                                : fmt::format("flat ring of {}", s.cp);
  if (s.ulysses > 1) ring = fmt::format("Ulysses {} x {}", s.ulysses, ring);
  if (s.tp > 1) ring = fmt::format("tensor parallelism {} (sequence-parallel) x {}", s.tp, ring);
  if (s.dp > 1) ring = fmt::format("{} data-parallel replicas of {}", s.dp, ring);
  if (s.dp > 1 || s.micro_batch > 1) ring += fmt::format(", micro-batches of {} sequence(s)", s.micro_batch);
  std::string checkpoint = to_string(s.checkpoint.policy);
  if (s.checkpoint.policy == CheckpointPolicy::SeqStash)
    checkpoint += fmt::format(" (kept {:.2f})", s.checkpoint.kept_fraction);
  return fmt::format("{}, {} layout, {} backward, checkpoint {}, LM head {}, ZeRO-{}{}", ring, to_string(s.layout),
                     to_string(s.backward), checkpoint,
                     s.lm_head_chunks > 1 ? fmt::format("fused in {} chunks", s.lm_head_chunks) : "unfused",
                     s.zero.stage, s.zero.offload ? " with CPU optimizer offload" : "");
}

double item(const plan::Prediction& p, const std::string& name) {
  for (const plan::Item& i : p.time_s) {
    if (i.name == name) return i.value;
  }
  return 0;
}

const plan::Alternative* runner_up(const plan::Plan& plan) {
  const plan::Alternative* best = nullptr;
  for (const plan::Alternative& a : plan.alternatives) {
    if (a.strategy.name == plan.strategy.name || a.predicted.tokens_per_s_per_gpu <= 0) continue;
    if (best == nullptr || a.predicted.tokens_per_s_per_gpu > best->predicted.tokens_per_s_per_gpu) best = &a;
  }
  return best;
}

std::string why_it_won(const plan::Plan& plan) {
  const double ours = plan.predicted.tokens_per_s_per_gpu;
  std::string out = "Why it won\n";
  if (!plan.job.only_checkpoint.empty()) {
    out += fmt::format(
        "  (every family checkpointed by {}, as --checkpoint asked, not by its own default: "
        "docs/strategies.md)\n",
        plan.job.only_checkpoint);
  }
  for (const plan::Alternative& a : plan.alternatives) {
    if (a.strategy.name == plan.strategy.name) continue;
    if (a.predicted.tokens_per_s_per_gpu <= 0) {
      out += fmt::format("  {:<24} cannot run: {}\n", shown(a.strategy.name), shown(a.reason));
    } else if (!a.feasible) {
      out += fmt::format("  {:<24} does not fit: {} ({:.2f}x our speed if it did)\n", shown(a.strategy.name),
                         shown(a.reason), a.predicted.tokens_per_s_per_gpu / ours);
    } else {
      out += fmt::format("  {:<24} fits, {:.0f} tokens/s per GPU: ours is {:.2f}x\n", shown(a.strategy.name),
                         a.predicted.tokens_per_s_per_gpu, ours / a.predicted.tokens_per_s_per_gpu);
    }
  }
  return out;
}

// What a plan may fill: the budget less the margin it keeps free (--memory-margin).
double usable_bytes(const plan::Plan& plan) { return plan.job.memory_budget_bytes - plan.job.memory_margin_bytes; }

std::string binding_constraint(const plan::Plan& plan) {
  const plan::Prediction& p = plan.predicted;
  const double budget = plan.job.memory_budget_bytes;
  const double usable = usable_bytes(plan);
  std::string out = "Binding constraint\n";
  for (const plan::Alternative& a : plan.alternatives) {
    if (!a.feasible && a.predicted.tokens_per_s_per_gpu > p.tokens_per_s_per_gpu) {
      out += fmt::format("  memory: {} would be {:.2f}x faster but {}\n", shown(a.strategy.name),
                         a.predicted.tokens_per_s_per_gpu / p.tokens_per_s_per_gpu, shown(a.reason));
    }
  }
  const double used = budget > 0 ? p.memory_total_bytes / budget : 0;
  const bool binds = usable > 0 && p.memory_total_bytes / usable >= kNearlyFull;
  double reserve = 0;
  for (const plan::Item& item : p.memory_bytes) {
    if (item.name == "reserve") reserve = item.value;
  }
  out += fmt::format(
      "  memory per GPU: {} of {} ({:.0f}%): {} allocated, {} reserve (CUDA context, workspaces, NCCL buffers, "
      "allocator fragmentation), {} spare{}{}\n",
      units::human_bytes(p.memory_total_bytes), units::human_bytes(budget), 100 * used,
      units::human_bytes(p.memory_total_bytes - reserve), units::human_bytes(reserve),
      units::human_bytes(std::max(0.0, budget - p.memory_total_bytes)),
      plan.job.memory_margin_bytes > 0 ? fmt::format(" (the plan keeps at least {} free: --memory-margin)",
                                                     units::human_bytes(plan.job.memory_margin_bytes))
                                       : std::string(),
      binds ? ": memory binds, nothing larger fits" : "");
  std::vector<plan::Item> shares = p.time_s;
  std::stable_sort(shares.begin(), shares.end(),
                   [](const plan::Item& a, const plan::Item& b) { return a.value > b.value; });
  if (!shares.empty() && p.step_time_s > 0) {
    out += fmt::format("  time: {} is {:.0f}% of the {} step", shown(shares.front().name),
                       100 * shares.front().value / p.step_time_s, units::human_duration(p.step_time_s));
    for (std::size_t i = 1; i < std::min<std::size_t>(shares.size(), 3); ++i) {
      out += fmt::format(", then {} {:.0f}%", shown(shares[i].name), 100 * shares[i].value / p.step_time_s);
    }
    out += "\n";
  }
  return out;
}

std::string runner_up_needs(const plan::Plan& plan) {
  const plan::Alternative* r = runner_up(plan);
  if (r == nullptr) return "Runner-up\n  none: no other family can run this job here\n";
  const plan::Prediction& ours = plan.predicted;
  const plan::Prediction& theirs = r->predicted;
  std::string out = fmt::format("Runner-up: {} ({})\n", shown(r->strategy.name), describe(r->strategy));
  if (!r->feasible) {
    out += fmt::format("  it does not fit: {}; it needs {} more memory per GPU", shown(r->reason),
                       units::human_bytes(theirs.memory_total_bytes - usable_bytes(plan)));
    if (theirs.tokens_per_s_per_gpu > ours.tokens_per_s_per_gpu) {
      out +=
          fmt::format(", and would then be {:.2f}x faster\n", theirs.tokens_per_s_per_gpu / ours.tokens_per_s_per_gpu);
    } else {
      out += fmt::format(", and even then would be {:.2f}x slower\n",
                         ours.tokens_per_s_per_gpu / theirs.tokens_per_s_per_gpu);
    }
    return out;
  }
  // Same tokens per step, so the throughput ratio is the step-time ratio.
  const double target = theirs.step_time_s * theirs.tokens_per_s_per_gpu / ours.tokens_per_s_per_gpu;
  const double shed = theirs.step_time_s - target;
  out += fmt::format("  to win it must cut its step from {} to {} ({:.1f}% less)\n",
                     units::human_duration(theirs.step_time_s), units::human_duration(target),
                     100 * shed / theirs.step_time_s);
  const double exposed = theirs.exposed_comm_s;
  if (exposed >= shed) {
    out += fmt::format("  hiding its {} of exposed communication would be enough\n", units::human_duration(exposed));
  } else {
    out += fmt::format("  hiding all its {} of exposed communication is not enough; its recompute is {}\n",
                       units::human_duration(exposed), units::human_duration(item(theirs, "recompute")));
  }
  return out;
}

// "TP 8 x DP 16, micro-batches of 1": a layout's degrees.
std::string degrees(const plan::Strategy& s) {
  std::string out = fmt::format("TP {} x DP {}", s.tp, s.dp);
  if (s.dp > 1 || s.micro_batch > 1) out += fmt::format(", micro-batches of {}", s.micro_batch);
  return out;
}

// The layouts the search scored, best first: why these degrees, and what the next ones cost.
// A plan written before the list existed has none, and says so.
constexpr std::size_t kLayoutsShown = 6;
std::string why_these_degrees(const plan::Plan& plan) {
  std::string out = "Why these degrees (the best candidate at each tensor- and data-parallel layout)\n";
  if (plan.layouts.empty()) return out + "  not recorded: this plan predates the list; plan it again to see it\n";
  const double ours = plan.predicted.step_time_s;
  for (std::size_t i = 0; i < std::min(plan.layouts.size(), kLayoutsShown); ++i) {
    const plan::Alternative& a = plan.layouts[i];
    const plan::Prediction& p = a.predicted;
    std::string verdict;
    if (!a.feasible) {
      verdict = fmt::format("does not fit: {}", shown(a.reason));
    } else if (a.strategy == plan.strategy) {
      verdict = "chosen";
    } else {
      verdict = fmt::format("{:+.1f}% step", ours > 0 ? 100 * (p.step_time_s / ours - 1) : 0.0);
    }
    out += fmt::format("  {:<36} {:<22} step {:>10}, MFU {:>5.1f}%, {:>10} per GPU  {}\n", degrees(a.strategy),
                       shown(a.strategy.name), units::human_duration(p.step_time_s), 100 * p.mfu,
                       units::human_bytes(p.memory_total_bytes), verdict);
  }
  if (plan.layouts.size() > kLayoutsShown) {
    out += fmt::format("  ... and {} more layouts (plan.json: /layouts)\n", plan.layouts.size() - kLayoutsShown);
  }
  return out;
}

}  // namespace

std::string explain_plan(const plan::Plan& plan) {
  const plan::Prediction& p = plan.predicted;
  std::string out = fmt::format("Plan: {} on {} ({} GPUs), {}, {} tokens, {} mask\n", shown(plan.strategy.name),
                                shown(plan.topology_name), plan.ranks.size(), shown(plan.job.model.name),
                                units::format_tokens(plan.job.seq), to_string(plan.job.mask));
  out += fmt::format("  {}\n", describe(plan.strategy));
  if (!plan.job.linears.empty()) {
    out += fmt::format(
        "  linear layers: {} GEMMs, priced as TransformerEngine runs them (burst export writes them, and prices "
        "TorchTitan's on torchao; burst run trains bf16 or fp32 only)\n",
        shown(plan.job.linears));
  }
  out +=
      fmt::format("  predicted: {:.0f} tokens/s per GPU, MFU {:.1f}%, step {}, {} per GPU\n\n", p.tokens_per_s_per_gpu,
                  100 * p.mfu, units::human_duration(p.step_time_s), units::human_bytes(p.memory_total_bytes));
  out += why_it_won(plan) + "\n" + why_these_degrees(plan) + "\n" + binding_constraint(plan) + "\n" +
         runner_up_needs(plan);
  return out;
}

}  // namespace burst::planner
