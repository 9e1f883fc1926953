// What the capacity report says, section by section, decided once for both formats.
//
// The reader is a person who must decide whether to run this job on this cluster, and how:
// the verdict first (the chosen strategy, its throughput, MFU and memory against the budget,
// its lead over the best peer that also fits, and which peers do not fit and why), then the
// evidence: the job, the cluster, the chosen knobs, every strategy side by side, where time
// and memory go, and how throughput scales with nodes. A strategy without a prediction (it
// cannot run at all) shows "n/a" rather than zeros that would read as "free".
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/text.hpp"
#include "common/units.hpp"
#include "simulator/attention/families.hpp"
#include "planner/detail/report/cluster_svg.hpp"
#include "planner/detail/report/report_document.hpp"
#include "planner/detail/report/report_text.hpp"
#include "planner/detail/report/run_comparison_svg.hpp"
#include "planner/detail/report/svg_charts.hpp"
#include "planner/detail/report/timeline_svg.hpp"

namespace burst::planner::report_doc {
namespace {

namespace rt = report_text;

// One strategy as the report compares it: the chosen plan or an alternative.
struct Candidate {
  std::string label;
  const plan::Strategy* strategy;
  bool feasible;
  std::string reason;
  const plan::Prediction* predicted;
};

std::vector<Candidate> candidates(const plan::Plan& p) {
  const double budget = p.job.memory_budget_bytes;
  const bool fits = budget <= 0 || p.predicted.memory_total_bytes <= budget;
  std::vector<Candidate> out{
      {p.strategy.name + " (chosen)", &p.strategy, fits, fits ? "" : "over the memory budget", &p.predicted}};
  for (const auto& a : p.alternatives) {
    // The chosen family's own entry among the alternatives is the plan itself: listed once.
    if (a.strategy.name != p.strategy.name)
      out.push_back({a.strategy.name, &a.strategy, a.feasible, a.reason, &a.predicted});
  }
  return out;
}

// The peers are what people use today: every family but ours (burst, burst-usp).
bool is_peer(const std::string& family) { return family.rfind("burst", 0) != 0; }

bool has_prediction(const plan::Prediction& p) { return p.step_time_s > 0 && std::isfinite(p.step_time_s); }

// "double ring 8 x 2, zigzag, q_ring backward" (with the tensor-parallel and Ulysses degrees when
// heads are split).
std::string describe(const plan::Strategy& s) {
  std::string ring = s.ring == RingKind::Double ? fmt::format("double ring {} x {}", s.inner, s.outer)
                                                : fmt::format("flat ring of {}", s.cp);
  if (s.cp <= 1) ring = "no ring";
  const std::string ulysses = s.ulysses > 1 ? fmt::format("Ulysses {}, ", s.ulysses) : "";
  const std::string tp = s.tp > 1 ? fmt::format("TP {}, ", s.tp) : "";
  const std::string dp = s.dp > 1 ? fmt::format("DP {} (micro-batches of {}), ", s.dp, s.micro_batch) : "";
  return fmt::format("{}{}{}{}, {}, {} backward", dp, tp, ulysses, ring, to_string(s.layout), to_string(s.backward));
}

std::string checkpointing(const plan::Strategy& s) {
  if (s.checkpoint.policy != CheckpointPolicy::SeqStash) return to_string(s.checkpoint.policy);
  return fmt::format("seq_stash, keeping attention outputs for {} of the local sequence",
                     rt::percent(s.checkpoint.kept_fraction));
}

std::string fits_cell(bool feasible, const std::string& reason) {
  return feasible ? "yes" : reason.empty() ? "no" : "no: " + reason;
}

// Step time, tokens/s per GPU, MFU, memory per GPU: "n/a" when nothing was predicted.
std::vector<std::string> figures(double step, double tokens, double mfu, double memory) {
  if (!(step > 0) || !std::isfinite(step)) return {"n/a", "n/a", "n/a", "n/a"};
  return {units::human_duration(step), rt::grouped(tokens), rt::percent(mfu), units::human_bytes(memory)};
}

std::string budget_text(double budget) {
  return budget > 0 ? units::human_bytes(budget) + " per GPU" : "none set (the GPU's memory)";
}

// What the search was held to (burst plan --strategy, --tp, --dp), and the faster plans that
// leaves out: the comparison below is not a ranking of free choices.
std::string restriction(const plan::Plan& p, const std::vector<Candidate>& all) {
  std::vector<std::string> held;
  if (!p.job.only_family.empty()) held.push_back(fmt::format("the {} family (--strategy)", p.job.only_family));
  if (p.job.only_tp > 0) held.push_back(fmt::format("tensor parallelism {} (--tp)", p.job.only_tp));
  if (p.job.only_dp > 0) held.push_back(fmt::format("{} data-parallel replicas (--dp)", p.job.only_dp));
  if (held.empty()) return "";
  std::string text = fmt::format(" The search was restricted to {}.", text::join(held, " and "));
  std::vector<std::string> faster;
  for (std::size_t i = 1; i < all.size(); ++i) {
    const Candidate& c = all[i];
    if (c.feasible && has_prediction(*c.predicted) &&
        c.predicted->tokens_per_s_per_gpu > p.predicted.tokens_per_s_per_gpu) {
      faster.push_back(
          fmt::format("{} ({} tokens/s per GPU)", c.label, rt::grouped(c.predicted->tokens_per_s_per_gpu)));
    }
  }
  if (!faster.empty()) {
    text += fmt::format(" Faster, and left out by it: {}.", text::join(faster, "; "));
  }
  return text;
}

std::string verdict(const plan::Plan& p, const std::vector<Candidate>& all) {
  const plan::Prediction& me = p.predicted;
  std::string text = fmt::format(
      "{} is the plan: {}. Predicted {} tokens/s per GPU at {} MFU, {} per iteration, {} "
      "per GPU",
      p.strategy.name, describe(p.strategy), rt::grouped(me.tokens_per_s_per_gpu), rt::percent(me.mfu),
      units::human_duration(me.step_time_s), units::human_bytes(me.memory_total_bytes));
  const double budget = p.job.memory_budget_bytes;
  text += budget > 0 ? fmt::format(" ({} the {} budget).", all.front().feasible ? "within" : "over",
                                   units::human_bytes(budget))
                     : " (no memory budget set).";
  const Candidate* best = nullptr;
  for (std::size_t i = 1; i < all.size(); ++i) {
    const Candidate& c = all[i];
    if (is_peer(c.label) && c.feasible && has_prediction(*c.predicted) && c.predicted->tokens_per_s_per_gpu > 0 &&
        (!best || c.predicted->tokens_per_s_per_gpu > best->predicted->tokens_per_s_per_gpu)) {
      best = &c;
    }
  }
  if (best && me.tokens_per_s_per_gpu > 0) {
    text += fmt::format(" That is {} the throughput of the best peer that also fits, {} ({} tokens/s per GPU).",
                        rt::ratio(me.tokens_per_s_per_gpu / best->predicted->tokens_per_s_per_gpu), best->label,
                        rt::grouped(best->predicted->tokens_per_s_per_gpu));
  } else if (all.size() > 1 && !best) {
    text += " No peer fits this job.";
  }
  std::vector<std::string> misfits;
  for (std::size_t i = 1; i < all.size(); ++i) {
    if (!all[i].feasible)
      misfits.push_back(fmt::format("{} ({})", all[i].label, all[i].reason.empty() ? "infeasible" : all[i].reason));
  }
  if (!misfits.empty()) text += fmt::format(" Do not fit: {}.", text::join(misfits, "; "));
  return text + restriction(p, all);
}

Table job_table(const plan::Job& job) {
  const ModelSpec& m = job.model;
  return Table{"job",
               {"field", "value"},
               {{"model", m.name},
                {"layers", fmt::format("{}", m.layers)},
                {"hidden size", fmt::format("{}", m.hidden)},
                {"MLP", fmt::format("{} ({}{})", m.ffn, m.gated_mlp ? "gated, " : "", m.activation)},
                {"attention heads (query / KV)", fmt::format("{} / {}", m.heads, m.kv_heads)},
                {"head dimension", fmt::format("{}", m.head_dim)},
                {"vocabulary", rt::grouped(static_cast<double>(m.vocab))},
                {"sequence", fmt::format("{} tokens ({})", units::format_tokens(job.seq),
                                         rt::grouped(static_cast<double>(job.seq)))},
                {"global batch (sequences per step)", fmt::format("{}", job.batch)},
                {"dtype", job.dtype},
                {"linear layers", job.linears.empty() ? job.dtype : job.linears + " GEMMs"},
                {"mask", to_string(job.mask)},
                {"memory budget", budget_text(job.memory_budget_bytes)}}};
}

Table knobs_table(const plan::Plan& p) {
  const plan::Strategy& s = p.strategy;
  const std::string ring = s.ring == RingKind::Double
                               ? fmt::format("double: {} GPUs of a node x {} nodes", s.inner, s.outer)
                               : fmt::format("flat: {} ranks", s.cp);
  const std::string travelling = s.backward == BackwardMode::QRing ? fmt::format("dQ in {} bytes", s.dq_bytes)
                                                                   : fmt::format("dK, dV in {} bytes", s.dkv_bytes);
  return Table{
      "knobs",
      {"knob", "value"},
      {{"strategy", s.name},
       {"tensor parallel (sequence-parallel, in a node)", fmt::format("{}", s.tp)},
       {"context parallel (ring ranks)", fmt::format("{}", s.cp)},
       {"Ulysses (head split)", fmt::format("{}", s.ulysses)},
       {"ring", ring},
       {"layout", to_string(s.layout)},
       {"backward", fmt::format("{} ({})", to_string(s.backward), travelling)},
       {"overlap", s.overlap ? "transfers hidden behind compute" : "off"},
       {"checkpointing", checkpointing(s)},
       {"LM head", s.lm_head_chunks > 1 ? fmt::format("fused with the loss, {} chunks", s.lm_head_chunks) : "unfused"},
       {"ZeRO", fmt::format("stage {}{}", s.zero.stage, s.zero.offload ? ", optimizer on the CPU" : "")},
       {"GPUs", fmt::format("{}", p.ranks.size())},
       {"candidates evaluated", fmt::format("{}", p.candidates_evaluated)}}};
}

// How the row's framework allocates beyond its knobs (its family's FrameworkMemory), "-" for a
// strategy that is no family.
std::string allocation_of(const std::string& name) {
  const sim::FamilyTraits* family = sim::find_family(name);
  return family != nullptr ? sim::describe_allocation(family->memory) : "-";
}

Table peers_table(const std::vector<Candidate>& all) {
  Table t{"peers",
          {"strategy", "configuration", "fits", "step time", "tokens/s per GPU", "MFU", "memory per GPU", "memory as",
           "exposed comm"},
          {}};
  for (const auto& c : all) {
    const plan::Prediction& p = *c.predicted;
    std::vector<std::string> row{c.label, describe(*c.strategy), fits_cell(c.feasible, c.reason)};
    for (auto& cell : figures(p.step_time_s, p.tokens_per_s_per_gpu, p.mfu, p.memory_total_bytes)) row.push_back(cell);
    row.push_back(allocation_of(c.strategy->name));
    row.push_back(has_prediction(p) ? units::human_duration(p.exposed_comm_s) : "n/a");
    t.rows.push_back(std::move(row));
  }
  return t;
}

// Both formats' copies of one chart.
template <class Spec, class Draw>
Chart chart(std::string caption, const Spec& spec, Draw draw) {
  return Chart{std::move(caption), draw(spec, false), draw(spec, true)};
}

// A stacked bar per candidate from one itemised breakdown of its prediction, in axis units.
svg::StackedBars breakdown(const std::vector<Candidate>& all, std::vector<plan::Item> plan::Prediction::*items,
                           double unit, std::string (*total)(double), double plan::Prediction::*total_of) {
  svg::StackedBars spec;
  for (const auto& c : all) {
    for (const auto& item : c.predicted->*items) {
      if (std::find(spec.legend.begin(), spec.legend.end(), item.name) == spec.legend.end()) {
        spec.legend.push_back(item.name);
      }
    }
  }
  for (const auto& c : all) {
    svg::Bar bar{c.label, std::vector<double>(spec.legend.size(), 0.0),
                 has_prediction(*c.predicted) ? total(c.predicted->*total_of) : "not predicted"};
    for (const auto& item : c.predicted->*items) {
      const auto at = std::find(spec.legend.begin(), spec.legend.end(), item.name) - spec.legend.begin();
      bar.values[static_cast<std::size_t>(at)] += rt::plottable(item.value) / unit;
    }
    spec.bars.push_back(std::move(bar));
  }
  return spec;
}

Section time_section(const std::vector<Candidate>& all) {
  svg::StackedBars spec =
      breakdown(all, &plan::Prediction::time_s, 1.0, units::human_duration, &plan::Prediction::step_time_s);
  spec.title = "Time per training iteration, by strategy";
  spec.axis_label = "seconds per iteration";
  return {"Where each iteration's time goes",
          {std::string("Predicted time of one training iteration, split into its parts; the label is the step time "
                       "(parts that overlap are counted once there)."),
           chart(spec.title, spec, svg::stacked_bars)}};
}

Section memory_section(const std::vector<Candidate>& all, double budget) {
  svg::StackedBars spec = breakdown(all, &plan::Prediction::memory_bytes, rt::kGiB, units::human_bytes,
                                    &plan::Prediction::memory_total_bytes);
  spec.title = "Memory per GPU, by strategy";
  spec.axis_label = "GiB per GPU";
  if (budget > 0) {
    spec.marker = budget / rt::kGiB;
    spec.marker_label = "budget " + units::human_bytes(budget);
  }
  return {"Where each GPU's memory goes",
          {std::string("Predicted peak memory of one GPU, split into its parts") +
               (budget > 0 ? "; the dashed line is the budget." : "."),
           chart(spec.title, spec, svg::stacked_bars)}};
}

Section timeline_section(const Timeline& t) {
  const std::string heading = "One attention layer, predicted";
  if (t.ranks.empty()) {
    return {heading, {std::string("Not simulated: this report was made without the layer's timeline.")}};
  }
  return {
      heading,
      {fmt::format(
           "The simulator's schedule of one attention layer (the same events `burst simulate --trace` "
           "writes) on {} of the {} ranks: forward {}, backward {}. Shaded gaps in a rank's compute lane "
           "are time it waits for data the ring has not delivered yet.",
           t.ranks.size() == static_cast<std::size_t>(t.world) ? "all" : fmt::format("the first {}", t.ranks.size()),
           t.world, units::human_duration(t.forward_s), units::human_duration(t.backward_s)),
       Chart{"Predicted timeline of one attention layer", svg::timeline_picture(t, false),
             svg::timeline_picture(t, true)}}};
}

// A table and a chart of measured against predicted figures.
std::vector<Block> comparison(const svg::Comparison& spec, const std::string& id) {
  Table t{id, {"figure", "measured", "predicted", "measured / predicted"}, {}};
  for (const Compared& c : spec.rows) {
    t.rows.push_back(
        {c.name, c.has_measured ? spec.format(c.measured) : "not measured",
         c.has_predicted ? spec.format(c.predicted) : "not predicted",
         c.has_measured && c.has_predicted && c.predicted > 0 ? rt::ratio(c.measured / c.predicted) : "n/a"});
  }
  std::string title = spec.title;
  return {std::move(t), chart(std::move(title), spec, svg::comparison_bars)};
}

Section run_section(const RunFigures& run, const plan::Plan& p) {
  Section s{"Measured against predicted",
            {fmt::format("A {} run of this plan (`burst run --json`) beside the plan's predictions.", run.kind)}};
  const std::vector<Compared> times = run.kind == "training" ? training_times(run, p) : run.times;
  for (auto& block :
       comparison({"Time: measured and predicted", times, 1.0, "seconds", units::human_duration}, "run-time")) {
    s.blocks.push_back(std::move(block));
  }
  if (!run.memory.empty()) {
    // Items the runtime holds no memory for (the allocator's reserve: a margin the plan keeps,
    // not an allocation) are named under the table instead of standing in it half empty.
    std::vector<Compared> measured;
    std::vector<std::string> predicted_only;
    for (const Compared& c : run.memory) {
      if (c.has_measured) {
        measured.push_back(c);
      } else {
        predicted_only.push_back(fmt::format("{} {}", c.name, units::human_bytes(c.predicted)));
      }
    }
    for (auto& block : comparison({"Memory per GPU: measured peak and predicted, by item", measured, rt::kGiB,
                                   "GiB per GPU", units::human_bytes},
                                  "run-memory")) {
      s.blocks.push_back(std::move(block));
    }
    if (!predicted_only.empty()) {
      s.blocks.emplace_back(fmt::format("Predicted only, nothing the runtime allocates to measure: {}.",
                                        text::join(predicted_only, "; ")));
    }
  }
  if (!run.level_bytes.empty()) {
    for (auto& block : comparison({"Ring bytes per rank by link level: measured and simulated", run.level_bytes,
                                   1024.0 * 1024.0, "MiB per rank", units::human_bytes},
                                  "run-bytes")) {
      s.blocks.push_back(std::move(block));
    }
  } else {
    s.blocks.emplace_back(
        std::string("Bytes per link level are measured by an attention-only run "
                    "(`burst run --attention-only --json`); this run does not report them."));
  }
  return s;
}

Section scaling_section(const std::vector<ScalingRow>& rows) {
  if (rows.empty()) {
    return {"Scaling with nodes", {std::string("Not computed: this report was made without a node sweep.")}};
  }
  Table t{"scaling",
          {"nodes", "GPUs", "best strategy", "fits", "step time", "tokens/s per GPU", "MFU", "memory per GPU"},
          {}};
  svg::Line line{"Tokens per second per GPU against node count", {}, {}, {}, "nodes", "tokens/s per GPU"};
  for (const auto& r : rows) {
    std::vector<std::string> row{fmt::format("{}", r.nodes), fmt::format("{}", r.gpus),
                                 r.strategy.empty() ? "none" : r.strategy, fits_cell(r.feasible, r.reason)};
    for (auto& cell : figures(r.step_time_s, r.tokens_per_s_per_gpu, r.mfu, r.memory_total_bytes)) row.push_back(cell);
    t.rows.push_back(std::move(row));
    const bool point = r.feasible && rt::plottable(r.tokens_per_s_per_gpu) > 0;
    line.categories.push_back(fmt::format("{}", r.nodes));
    line.values.push_back(point ? std::optional(r.tokens_per_s_per_gpu) : std::nullopt);
    line.value_labels.push_back(point ? rt::grouped(r.tokens_per_s_per_gpu) : "does not fit");
  }
  return {"Scaling with nodes",
          {std::string("The best plan on each cluster size; a gap in the line is a size where nothing fits."),
           std::move(t), chart(line.title, line, svg::line_chart)}};
}

}  // namespace

Document build(const ReportInput& input) {
  const plan::Plan& p = input.plan;
  const std::vector<Candidate> all = candidates(p);
  Document doc;
  doc.title = fmt::format("Capacity report: {} at {} tokens on {}", p.job.model.name, units::format_tokens(p.job.seq),
                          p.topology_name.empty() ? "an unnamed cluster" : p.topology_name);
  doc.sections.push_back({"Verdict", {verdict(p, all)}});
  doc.sections.push_back({"The job", {job_table(p.job)}});
  std::vector<std::vector<std::string>> cluster = cluster_rows(p.cluster);
  Section cluster_section{"The cluster", {}};
  if (cluster.empty()) {
    cluster_section.blocks.emplace_back(std::string("The plan carries no description of its cluster."));
  } else {
    cluster_section.blocks.emplace_back(Table{"cluster", {"field", "value"}, std::move(cluster)});
  }
  if (!p.ranks.empty()) {
    cluster_section.blocks.emplace_back(
        Chart{"The cluster with the plan's rings: each arrow goes from a rank to the next one in its ring.",
              svg::cluster_picture(p, false), svg::cluster_picture(p, true)});
  }
  doc.sections.push_back(std::move(cluster_section));
  doc.sections.push_back({"The chosen plan", {knobs_table(p)}});
  doc.sections.push_back(timeline_section(input.timeline));
  doc.sections.push_back({"Strategies side by side", {peers_table(all)}});
  doc.sections.push_back(time_section(all));
  doc.sections.push_back(memory_section(all, p.job.memory_budget_bytes));
  if (input.run) doc.sections.push_back(run_section(*input.run, p));
  doc.sections.push_back(scaling_section(input.scaling));
  return doc;
}

}  // namespace burst::planner::report_doc
