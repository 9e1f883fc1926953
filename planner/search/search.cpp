// The search over families and their candidates (see search.hpp).
#include "planner/search/search.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/progress.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "planner/search/candidates.hpp"
#include "simulator/attention/ring.hpp"

namespace burst::planner {
namespace {

// The knobs an attention layer simulation depends on: the tensor- and data-parallel degrees, the
// micro-batch, the attention strategy's own and its family's code (families.hpp).
using AttentionKey = std::tuple<int, int, int, int, RingKind, int, Layout, BackwardMode, int, int, bool, int, int>;
AttentionKey key_of(const sim::TrainingStrategy& s) {
  const sim::AttentionStrategy& a = s.attention;
  return {s.tp,
          s.dp,
          s.micro_batch,
          a.ulysses,
          a.ring,
          a.inner,
          a.layout,
          a.backward,
          a.dkv_bytes,
          a.dq_bytes,
          a.overlap,
          a.code.output_accumulator_bytes,
          a.code.gradient_bytes_after_first_window};
}

// Better: feasible first; then faster; then smaller. Strictly better only, so ties keep the
// earlier candidate. Throughputs within 0.01% are a tie: an LM head in 32 chunks instead of 2
// costs 0.002% of a 1M-token step and saves 15 GiB per GPU, headroom worth more than a
// difference far inside the model's error (docs/fidelity.md). Offloading the optimizer, which
// costs some 0.05% there, is not a tie: it is chosen only when memory needs it.
constexpr double kSameSpeed = 1e-4;
bool better(const Evaluated& a, const Evaluated& b) {
  if (a.feasible != b.feasible) return a.feasible;
  if (a.feasible) {
    const double fa = a.sim.tokens_per_s_per_gpu, fb = b.sim.tokens_per_s_per_gpu;
    if (std::abs(fa - fb) > kSameSpeed * std::max(fa, fb)) return fa > fb;
    return a.sim.memory.total() < b.sim.memory.total();
  }
  const bool a_runs = a.sim.not_applicable.empty(), b_runs = b.sim.not_applicable.empty();
  if (a_runs != b_runs) return a_runs;
  return a_runs && a.sim.memory.total() < b.sim.memory.total();
}

// Keeps `e` as the best when there is none yet or it is better().
void keep_better(std::optional<Evaluated>& best, Evaluated&& e) {
  if (!best || better(e, *best)) best = std::move(e);
}

// Each candidate's share of the search's work, for the progress estimate. A candidate whose
// attention layer no earlier one simulated pays for that simulation: a task graph with a task
// per rank and ring step, world x ring of them (67 million at 8192 ranks), which dominates;
// every candidate also costs about a pass over the world's ranks. Without this the estimate
// followed the first candidates, which reuse small layers, and promised a minute for a run of
// many (plan --nodes 1024).
std::vector<double> candidate_work(const std::vector<std::vector<sim::TrainingStrategy>>& families,
                                   const topo::Topology& topology) {
  const double ranks = sim::world_of(topology).size();
  std::set<AttentionKey> simulated;
  std::vector<double> work;
  for (const auto& candidates : families) {
    work.reserve(work.size() + candidates.size());
    for (const sim::TrainingStrategy& candidate : candidates) {
      double w = ranks;
      if (simulated.insert(key_of(candidate)).second) {
        // T D copies of a world of ranks / (T D), each with a ring of ranks / (T D U).
        w += ranks * (ranks / std::max(1, candidate.tp * candidate.dp) / std::max(1, candidate.attention.ulysses));
      }
      work.push_back(w);
    }
  }
  return work;
}

class Searcher {
 public:
  Searcher(const SearchRequest& request, const topo::Topology& topology, double budget)
      : request_(request), topology_(topology), budget_(budget), margin_(request.memory_margin_bytes) {}

  Evaluated evaluate(const std::string& family, const sim::TrainingStrategy& strategy) {
    Evaluated e;
    e.family = family;
    const sim::LayerSimulation& layer = attention(strategy);
    e.sim = sim::simulate_iteration(request_.job, strategy, topology_, request_.simulation, layer);
    if (!e.sim.not_applicable.empty()) {
      e.reason = "not applicable: " + e.sim.not_applicable;
    } else if (e.sim.memory.total() > budget_ - margin_) {
      e.reason = margin_ > 0 ? fmt::format("needs {} per GPU, budget {} less the {} margin",
                                           units::human_bytes(e.sim.memory.total()), units::human_bytes(budget_),
                                           units::human_bytes(margin_))
                             : fmt::format("needs {} per GPU, budget {}", units::human_bytes(e.sim.memory.total()),
                                           units::human_bytes(budget_));
    } else {
      e.feasible = true;
    }
    return e;
  }

 private:
  const sim::LayerSimulation& attention(const sim::TrainingStrategy& s) {
    const AttentionKey key = key_of(s);
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      const sim::AttentionShape shape = sim::attention_shape(request_.job, s);
      it = cache_
               .emplace(key, sim::simulate_attention_layer(shape, request_.job.mask, s.attention, topology_,
                                                           request_.simulation))
               .first;
    }
    return it->second;
  }

  const SearchRequest& request_;
  const topo::Topology& topology_;
  double budget_;
  double margin_;
  std::map<AttentionKey, sim::LayerSimulation> cache_;
};

// A searched family's layouts worth searching knob by knob: all of them when they are few (every
// tensor-parallel degree of one sequence a step), else the kLayoutsSearched whose best probe is
// best (better(): feasible, faster, smaller), in their original order. The probes' results are
// kept as the family's starting best.
constexpr std::size_t kLayoutsSearched = 4;

std::vector<ParallelLayout> layouts_to_search(const sim::FamilyTraits& family, const SearchRequest& request,
                                              const topo::Topology& topology, Searcher& searcher,
                                              std::vector<Evaluated>& probed) {
  std::vector<ParallelLayout> all = parallel_layouts(request.job, topology, request.only_tp, request.only_dp);
  if (all.size() <= kLayoutsSearched) return all;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < all.size(); ++i) {
    std::optional<Evaluated> best;
    for (const sim::TrainingStrategy& probe : layout_probes(family, request.job, topology, all[i], request.checkpoint))
      keep_better(best, searcher.evaluate(std::string(family.name), probe));
    probed.push_back(std::move(best).value_or(Evaluated{}));
    order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return better(probed[a], probed[b]); });
  order.resize(kLayoutsSearched);
  std::sort(order.begin(), order.end());
  std::vector<ParallelLayout> kept;
  for (const std::size_t i : order) kept.push_back(all[i]);
  return kept;
}

}  // namespace

SearchResult search(const SearchRequest& request, const topo::Topology& topology) {
  SearchResult result;
  result.memory_budget_bytes =
      request.memory_budget_bytes > 0 ? request.memory_budget_bytes : topology.gpu().memory_bytes;
  Searcher searcher(request, topology, result.memory_budget_bytes);

  const std::vector<std::string> names = sim::family_names();
  std::vector<std::vector<sim::TrainingStrategy>> families;
  std::vector<std::vector<Evaluated>> probed(names.size());
  families.reserve(names.size());
  for (std::size_t f = 0; f < names.size(); ++f) {
    const sim::FamilyTraits& family = sim::family_traits(names[f], "--strategy");
    const std::vector<ParallelLayout> layouts =
        family.searched ? layouts_to_search(family, request, topology, searcher, probed[f])
                        : parallel_layouts(request.job, topology, request.only_tp, request.only_dp);
    std::vector<sim::TrainingStrategy> list;
    for (const ParallelLayout& layout : layouts) {
      std::vector<sim::TrainingStrategy> at =
          family_candidates(family, request.job, topology, layout, request.checkpoint);
      list.insert(list.end(), at.begin(), at.end());
    }
    result.candidates_evaluated += static_cast<int>(probed[f].size());
    families.push_back(std::move(list));
  }
  Progress progress("planning", candidate_work(families, topology), request.progress);
  int scored = 0;
  std::map<std::tuple<int, int, int>, Evaluated> by_layout;
  // The family's best, and the allowed families' best at the candidate's layout.
  const auto keep = [&](std::optional<Evaluated>& best, Evaluated&& e) {
    if (e.sim.not_applicable.empty() && (request.only_family.empty() || e.family == request.only_family)) {
      const sim::TrainingStrategy& s = e.sim.strategy;
      const auto [it, first] = by_layout.try_emplace({s.tp, s.dp, s.micro_batch}, e);
      if (!first && better(e, it->second)) it->second = e;
    }
    keep_better(best, std::move(e));
  };
  for (std::size_t f = 0; f < families.size(); ++f) {
    const std::string& family = names[f];
    std::optional<Evaluated> best;
    for (Evaluated& e : probed[f]) keep(best, std::move(e));
    for (const sim::TrainingStrategy& candidate : families[f]) {
      if (result.candidates_evaluated >= request.max_candidates && best) {
        result.stopped_at_budget = true;
        break;
      }
      keep(best, searcher.evaluate(family, candidate));
      ++result.candidates_evaluated;
      progress.update(++scored);
    }
    result.best_per_family.push_back(std::move(best).value_or(Evaluated{}));
  }
  progress.finish();
  for (auto& [layout, e] : by_layout) result.best_per_layout.push_back(std::move(e));
  std::stable_sort(result.best_per_layout.begin(), result.best_per_layout.end(), better);
  for (std::size_t i = 0; i < result.best_per_family.size(); ++i) {
    const Evaluated& e = result.best_per_family[i];
    if (!request.only_family.empty() && e.family != request.only_family) continue;
    if (!e.feasible) continue;
    if (result.chosen < 0 || better(e, result.best_per_family[static_cast<std::size_t>(result.chosen)])) {
      result.chosen = static_cast<int>(i);
    }
  }
  return result;
}

CheckpointPolicy parse_checkpoint_for_every_family(std::string_view text, std::string_view field) {
  if (text == to_string(CheckpointPolicy::SeqStash)) {
    throw Error(Problem{std::string(field),
                        "seq_stash is burst's own sequence-level checkpointing (a kept share of a striped layout), "
                        "which no peer runs",
                        "none, full or attn_stash", "burst's families search seq_stash already: leave it unset"});
  }
  const std::vector<std::string> every_family = checkpoint_policies_of_every_family();
  if (std::find(every_family.begin(), every_family.end(), text) == every_family.end()) {
    throw Error(Problem{std::string(field), fmt::format("unknown checkpoint policy '{}'", text),
                        text::join(every_family), text::did_you_mean(text, every_family)});
  }
  return parse_checkpoint_policy(text, field);
}

}  // namespace burst::planner
