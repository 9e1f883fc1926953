// Building and checking the ring schedule of a plan (see ring_schedule.hpp).
#include "runtime/schedule/ring_schedule.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"

namespace burst::rt {
namespace {

// World ranks of Ulysses member j's ring, in ring-rank order, from the plan's ring orders: a
// flat ring's order, or the intra rings one after another (ring rank n * I + l is position l of
// intra ring n), cross-checked against the inter rings (position n of inter ring l).
std::vector<int> ring_members(const plan::Plan& plan, const RingGeometry& g, int replica, int tp, int member,
                              Problems& problems) {
  std::vector<const plan::Ring*> flat, intra, inter;
  for (const plan::Ring& r : plan.rings) {
    if (r.member != member || r.dp != replica || r.tp != tp) continue;
    (r.level == "flat" ? flat : r.level == "intra" ? intra : inter).push_back(&r);
  }
  std::vector<std::string> coordinates;
  if (plan.strategy.dp > 1) coordinates.push_back(fmt::format("replica {}", replica));
  if (plan.strategy.tp > 1) coordinates.push_back(fmt::format("tensor-parallel rank {}", tp));
  if (g.ulysses > 1) coordinates.push_back(fmt::format("member {}", member));
  const std::string where =
      coordinates.empty() ? "plan:/rings" : fmt::format("plan:/rings ({})", fmt::join(coordinates, ", "));
  std::vector<int> members;
  if (g.outer == 1) {
    if (flat.size() != 1 || static_cast<int>(flat.front()->order.size()) != g.ring) {
      problems.add({where, fmt::format("a flat ring of {} ranks needs one \"flat\" ring of {} ranks", g.ring, g.ring),
                    "", "make the plan with burst plan"});
      return {};
    }
    return flat.front()->order;
  }
  if (static_cast<int>(intra.size()) != g.outer || static_cast<int>(inter.size()) != g.inner) {
    problems.add({where,
                  fmt::format("a double ring {} x {} needs {} intra and {} inter rings, found {} and {}", g.inner,
                              g.outer, g.outer, g.inner, intra.size(), inter.size()),
                  "", "make the plan with burst plan"});
    return {};
  }
  for (const plan::Ring* r : intra) members.insert(members.end(), r->order.begin(), r->order.end());
  for (int l = 0; l < g.inner; ++l) {
    for (int n = 0; n < g.outer; ++n) {
      const auto& order = inter[static_cast<std::size_t>(l)]->order;
      if (static_cast<int>(order.size()) != g.outer ||
          order[static_cast<std::size_t>(n)] != members[static_cast<std::size_t>(n * g.inner + l)]) {
        problems.add({fmt::format("{} (inter ring {})", where, l),
                      "does not join the same inner position of every intra ring", "",
                      "make the plan with burst plan"});
        return {};
      }
    }
  }
  return members;
}

}  // namespace

RingSchedule::RingSchedule(const plan::Plan& plan, std::int64_t seq, int context)
    : seq_(seq), mask_(plan.job.mask), context_(context) {
  const plan::Strategy& s = plan.strategy;
  const ModelSpec& m = plan.job.model;
  const int world = static_cast<int>(plan.ranks.size());
  Problems problems;
  if (s.ulysses < 1 || s.cp < 1 || s.dp < 1 || s.tp < 1 || s.tp * s.cp * s.ulysses * s.dp != world) {
    problems.add(
        {"plan:/strategy",
         fmt::format("tp {} x cp {} x ulysses {} x dp {} on a world of {} ranks", s.tp, s.cp, s.ulysses, s.dp, world),
         "tp x cp x ulysses x dp = world size", "make the plan with burst plan"});
  }
  const int contexts = std::max(1, s.dp) * std::max(1, s.tp);
  if (context < 0 || context >= contexts) {
    problems.add({"plan:/strategy/dp", fmt::format("context-parallel group {} of {}", context, contexts),
                  fmt::format("a group 0..{} (dp x tp of them)", contexts - 1), ""});
  }
  // Each tensor-parallel rank attends with its heads / tp query and kv_heads / tp KV heads,
  // which its Ulysses group then splits again.
  const int tp = std::max(1, s.tp);
  if (m.heads % tp != 0 || m.kv_heads % tp != 0) {
    problems.add({"plan:/strategy/tp",
                  fmt::format("tensor-parallel degree {} does not divide the model's {} heads and {} KV heads", s.tp,
                              m.heads, m.kv_heads),
                  "a degree dividing both /job/model/heads and /job/model/kv_heads",
                  "each tensor-parallel rank computes heads / tp query heads and kv_heads / tp KV heads"});
  } else if (s.ulysses > 1 && (m.heads / tp % s.ulysses != 0 || m.kv_heads / tp % s.ulysses != 0)) {
    problems.add(
        {"plan:/strategy/ulysses",
         tp == 1
             ? fmt::format("Ulysses degree {} does not divide the model's {} heads and {} KV heads", s.ulysses, m.heads,
                           m.kv_heads)
             : fmt::format("Ulysses degree {} does not divide the {} heads and {} KV heads of a tensor-parallel rank",
                           s.ulysses, m.heads / tp, m.kv_heads / tp),
         "a degree dividing both /job/model/heads and /job/model/kv_heads (over tp)",
         "each member of a Ulysses group computes heads / (tp ulysses) query heads and kv_heads / (tp ulysses) KV "
         "heads"});
  }
  problems.throw_if_any();
  const int replica = context / tp, tp_rank = context % tp;
  const int replica_ranks = world / s.dp;
  const int first = replica * replica_ranks;
  geometry_.world = replica_ranks / tp;
  geometry_.ulysses = s.ulysses;
  geometry_.ring = s.cp;
  geometry_.inner = s.ring == RingKind::Double ? s.inner : s.cp;
  geometry_.outer = geometry_.ring / geometry_.inner;
  const std::int64_t multiple = layout_multiple(s.layout, geometry_.ring) * s.ulysses;
  if (seq <= 0 || seq % multiple != 0) {
    problems.add({"seq",
                  fmt::format("{} tokens do not split evenly: {} on a ring of {}{} needs a multiple of {}", seq,
                              to_string(s.layout), geometry_.ring,
                              s.ulysses > 1 ? fmt::format(" with Ulysses groups of {}", s.ulysses) : "", multiple),
                  fmt::format("a multiple of {}", multiple), ""});
  }
  for (int j = 0; j < s.ulysses; ++j) {
    world_of_ring_.push_back(ring_members(plan, geometry_, replica, tp_rank, j, problems));
  }
  problems.throw_if_any();
  ring_of_world_.assign(static_cast<std::size_t>(world), -1);
  member_of_world_.assign(static_cast<std::size_t>(world), -1);
  for (int j = 0; j < s.ulysses; ++j) {
    for (int k = 0; k < geometry_.ring; ++k) {
      const int w = world_of_ring_[static_cast<std::size_t>(j)][static_cast<std::size_t>(k)];
      if (w < first || w >= first + replica_ranks || w % tp != tp_rank ||
          ring_of_world_[static_cast<std::size_t>(w)] >= 0) {
        const bool replicas = s.dp > 1;
        problems.add(
            {"plan:/rings",
             fmt::format("world rank {} is out of range or in the rings twice ({}{}Ulysses member {}, ring "
                         "rank {})",
                         w, replicas ? fmt::format("replica {}, ", replica) : "",
                         tp > 1 ? fmt::format("tensor-parallel rank {}, ", tp_rank) : "", j, k),
             fmt::format("every rank {}..{}{} in exactly one member's ring", first, first + replica_ranks - 1,
                         tp > 1 ? fmt::format(" whose rank mod {} is {}", tp, tp_rank) : ""),
             std::string(replicas ? "replica d is the d-th world / dp ranks; " : "") +
                 std::string(tp > 1 ? "tensor-parallel rank t is every world rank w with w mod tp = t; " : "") +
                 "the Ulysses group of ring rank k is the k-th rank of every member's ring"});
        continue;
      }
      ring_of_world_[static_cast<std::size_t>(w)] = k;
      member_of_world_[static_cast<std::size_t>(w)] = j;
    }
  }
  problems.throw_if_any();
  for (int k = 0; k < geometry_.ring; ++k) tokens_.push_back(ring_tokens(s.layout, seq, geometry_.ring, k));
  needed_.resize(static_cast<std::size_t>(geometry_.ring) * geometry_.ring);
  for (int q = 0; q < geometry_.ring; ++q) {
    for (int k = 0; k < geometry_.ring; ++k) {
      needed_[static_cast<std::size_t>(q * geometry_.ring + k)] = allowed_pairs(mask_, tokens(q), tokens(k)) > 0;
    }
  }
}

int RingSchedule::replica_of(const plan::Plan& plan, int world_rank) {
  const int world = static_cast<int>(plan.ranks.size());
  const int dp = std::max(1, plan.strategy.dp), tp = std::max(1, plan.strategy.tp);
  if (world_rank < 0 || world_rank >= world || world % (dp * tp) != 0) {
    throw Error(Problem{"plan:/strategy/dp",
                        fmt::format("world rank {} of {} ranks in {} replicas of tensor-parallel groups of {}",
                                    world_rank, world, dp, tp),
                        "a rank of the plan's world, which the replicas and the tensor-parallel groups divide", ""});
  }
  return world_rank / (world / dp);
}

int RingSchedule::context_of(const plan::Plan& plan, int world_rank) {
  const int tp = std::max(1, plan.strategy.tp);
  return replica_of(plan, world_rank) * tp + world_rank % tp;
}

std::vector<RingSchedule> RingSchedule::every_context(const plan::Plan& plan, std::int64_t seq) {
  std::vector<RingSchedule> out;
  const int tp = std::max(1, plan.strategy.tp);
  const int contexts = std::max(1, plan.strategy.dp) * tp;
  for (int g = 0; g < contexts; ++g) out.emplace_back(plan, seq, g);
  // A tensor-parallel group is tp consecutive ranks, which must hold the same tokens: rank
  // T k + t sits where rank T k sits, in its own rank's rings.
  Problems problems;
  for (int g = 0; g < contexts; ++g) {
    const RingSchedule& mine = out[static_cast<std::size_t>(g)];
    const RingSchedule& first = out[static_cast<std::size_t>(g - g % tp)];
    for (int j = 0; j < mine.ulysses(); ++j) {
      for (int k = 0; k < mine.ring_size(); ++k) {
        if (mine.world_rank(k, j) == first.world_rank(k, j) + g % tp) continue;
        problems.add({fmt::format("plan:/rings (tensor-parallel rank {}, member {})", g % tp, j),
                      fmt::format("ring rank {} is world rank {}, where tensor-parallel rank 0 has world rank {}", k,
                                  mine.world_rank(k, j), first.world_rank(k, j)),
                      fmt::format("world rank {}", first.world_rank(k, j) + g % tp),
                      "a tensor-parallel group is tp consecutive ranks holding the same tokens: each rank's rings "
                      "put it where its group's rank 0 is"});
        break;
      }
    }
  }
  problems.throw_if_any();
  return out;
}

std::vector<int> RingSchedule::group(int ring_rank) const {
  std::vector<int> out;
  for (const auto& ring : world_of_ring_) out.push_back(ring[static_cast<std::size_t>(ring_rank)]);
  return out;
}

std::vector<std::int64_t> RingSchedule::rank_positions(int world_rank) const {
  if (!holds(world_rank)) {
    throw Error(Problem{"ring schedule",
                        fmt::format("world rank {} is not in context-parallel group {}'s rings", world_rank, context_),
                        "", "build the schedule of the rank's own group (context_of)"});
  }
  const auto all = positions(ring_rank(world_rank));
  const std::size_t share = all.size() / static_cast<std::size_t>(geometry_.ulysses);
  const auto first = all.begin() + static_cast<std::ptrdiff_t>(share * static_cast<std::size_t>(member(world_rank)));
  return {first, first + static_cast<std::ptrdiff_t>(share)};
}

std::vector<std::int64_t> RingSchedule::positions(int ring_rank) const {
  std::vector<std::int64_t> out;
  const TokenSet& set = tokens(ring_rank);
  for (int i = 0; i < set.size; ++i) {
    const Progression& p = set.parts[static_cast<std::size_t>(i)];
    for (std::int64_t j = 0; j < p.count; ++j) out.push_back(p.start + j * p.stride);
  }
  return out;
}

bool RingSchedule::pair_needed(int query_block, int key_block) const {
  return needed_[static_cast<std::size_t>(query_block * geometry_.ring + key_block)] != 0;
}

int RingSchedule::block_at(Travel travel, int ring_rank, int step) const {
  if (travel == Travel::KeysAndValues) return geometry_.block_at(ring_rank, step);
  const int last = geometry_.ring - 1;
  return last - geometry_.block_at(last - ring_rank, step);
}

int RingSchedule::holder(Travel travel, int block, int step) const {
  if (travel == Travel::KeysAndValues) return geometry_.visitor(block, step);
  const int last = geometry_.ring - 1;
  return last - geometry_.visitor(last - block, step);
}

bool RingSchedule::holder_needs(Travel travel, int block, int step) const {
  const int h = holder(travel, block, step);
  return travel == Travel::KeysAndValues ? pair_needed(h, block) : pair_needed(block, h);
}

RingLevel RingSchedule::level_between(int src, int dst) const {
  if (geometry_.outer == 1) return RingLevel::Flat;
  return src / geometry_.inner == dst / geometry_.inner ? RingLevel::Intra : RingLevel::Inter;
}

std::vector<Hop> RingSchedule::read_hops(Travel travel) const {
  const RingGeometry& g = geometry_;
  std::vector<Hop> hops;
  for (int b = 0; b < g.ring; ++b) {
    for (int o = 0; o < g.outer; ++o) {
      const int first = o * g.inner, last = first + g.inner - 1;
      // Inner hops of outer step o, t -> t+1, kept when a later step of this outer step needs b.
      bool later = false;
      std::vector<Hop> inner;
      for (int t = last - 1; t >= first; --t) {
        later = later || holder_needs(travel, b, t + 1);
        if (later) {
          const int src = holder(travel, b, t), dst = holder(travel, b, t + 1);
          inner.push_back({b, src, dst, t, t + 1, level_between(src, dst)});
        }
      }
      hops.insert(hops.end(), inner.rbegin(), inner.rend());
      // The outer hop that starts outer step o+1, kept when any step from there on needs b.
      if (o + 1 < g.outer) {
        bool any = false;
        for (int s = last + 1; s < g.ring && !any; ++s) any = holder_needs(travel, b, s);
        if (any) {
          const int src = holder(travel, b, first), dst = holder(travel, b, last + 1);
          hops.push_back({b, src, dst, first, last + 1, level_between(src, dst)});
        }
      }
    }
  }
  return hops;
}

std::vector<Hop> RingSchedule::accumulator_hops(Travel travel) const {
  const RingGeometry& g = geometry_;
  std::vector<Hop> hops;
  for (int b = 0; b < g.ring; ++b) {
    int from = -1, from_step = 0;
    for (int s = 0; s < g.ring; ++s) {
      if (!holder_needs(travel, b, s)) continue;
      const int to = holder(travel, b, s);
      if (from >= 0) hops.push_back({b, from, to, from_step, s, level_between(from, to)});
      from = to;
      from_step = s;
    }
    if (from >= 0 && from != b) hops.push_back({b, from, b, from_step, g.ring, level_between(from, b)});
  }
  return hops;
}

std::vector<std::string> RingSchedule::check() const {
  const RingGeometry& g = geometry_;
  std::vector<std::string> problems;
  // Every non-empty pair exactly once on each read ring: rank k at step s computes (queries of
  // k, keys of the K,V block it holds) or (queries of the query block it holds, keys of k).
  for (const Travel travel : {Travel::KeysAndValues, Travel::Queries}) {
    std::map<std::pair<int, int>, int> computed;  // (query block, key block)
    for (int k = 0; k < g.ring; ++k) {
      for (int s = 0; s < g.ring; ++s) {
        const int b = block_at(travel, k, s);
        const auto pair = travel == Travel::KeysAndValues ? std::pair{k, b} : std::pair{b, k};
        if (pair_needed(pair.first, pair.second)) ++computed[pair];
      }
    }
    for (int q = 0; q < g.ring; ++q) {
      for (int k = 0; k < g.ring; ++k) {
        const int times = computed.count({q, k}) ? computed.at({q, k}) : 0;
        if (times != (pair_needed(q, k) ? 1 : 0)) {
          problems.push_back(fmt::format("pair (queries of {}, keys of {}) computed {} times", q, k, times));
        }
      }
    }
  }
  // Every hop leaves a rank that holds its data, and every needed (block, step) is delivered.
  for (const Travel travel : {Travel::KeysAndValues, Travel::Queries}) {
    std::set<std::pair<int, int>> has;  // (ring rank, block) once received or owned
    for (int k = 0; k < g.ring; ++k) has.insert({k, k});
    std::vector<Hop> hops = read_hops(travel);
    std::stable_sort(hops.begin(), hops.end(), [](const Hop& a, const Hop& b) { return a.send_step < b.send_step; });
    for (const Hop& h : hops) {
      if (!has.count({h.src, h.block})) {
        problems.push_back(
            fmt::format("block {} leaves ring rank {} at step {} before it got there", h.block, h.src, h.send_step));
      }
      if (h.use_step <= h.send_step) problems.push_back(fmt::format("block {} is used before it is sent", h.block));
      has.insert({h.dst, h.block});
    }
    for (int b = 0; b < g.ring; ++b) {
      for (int s = 0; s < g.ring; ++s) {
        if (holder_needs(travel, b, s) && !has.count({holder(travel, b, s), b})) {
          problems.push_back(
              fmt::format("block {} never reaches ring rank {} for step {}", b, holder(travel, b, s), s));
        }
      }
    }
  }
  return problems;
}

void RingSchedule::require_complete() const {
  const auto problems = check();
  if (problems.empty()) return;
  std::vector<Problem> list;
  for (const auto& p : problems) list.push_back({"schedule", p, "", "a bug in the schedule: please report it"});
  throw Error(std::move(list));
}

}  // namespace burst::rt
