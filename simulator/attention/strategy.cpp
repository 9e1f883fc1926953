// Strategy families: their names, their defaults as used in practice, and whether one can run
// a job on a world. docs/strategies.md says where each default comes from.
//
// A family is a point in (Ulysses degree U, flat or double ring, layout, backward mode, bytes
// of the travelling gradients, overlap). The one choice made per shape is burst's backward
// mode: both closed forms (lowering.hpp) are evaluated and the cheaper in bytes wins, so
// multi-head attention gets the Q ring (about 0.76 of the K,V ring's bytes for d = 128) and
// grouped-query attention, whose K,V are h/h_kv times smaller than Q, gets the K,V ring.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "common/text.hpp"
#include "common/token_sets.hpp"
#include "simulator/detail/attention/copies.hpp"
#include "simulator/attention/families.hpp"
#include "simulator/attention/lowering.hpp"

namespace burst::sim {
namespace {

bool divides(std::int64_t d, std::int64_t n) { return d > 0 && n % d == 0; }

// U consecutive ranks: inside one node, or whole nodes; and an even split of the heads.
bool ulysses_fits(int u, const AttentionShape& shape, const World& world) {
  const int g = world.gpus_per_node;
  return divides(u, world.size()) && (divides(u, g) || divides(g, u)) && divides(u, shape.heads) &&
         divides(u, shape.kv_heads);
}

std::vector<std::string> valid_ulysses(const AttentionShape& shape, const World& world) {
  std::vector<std::string> valid;
  for (int u = 1; u <= world.size(); ++u) {
    if (ulysses_fits(u, shape, world)) valid.push_back(std::to_string(u));
  }
  return valid;
}

int largest_ulysses(const AttentionShape& shape, const World& world, int cap) {
  for (int u = std::min(cap, world.size()); u > 1; --u) {
    if (ulysses_fits(u, shape, world)) return u;
  }
  return 1;
}

BackwardMode cheaper_backward(const AttentionShape& shape, const AttentionStrategy& strategy, const World& world) {
  if (strategy.ulysses < 1 || world.size() < 1) return BackwardMode::QRing;
  const int ring = world.size() / strategy.ulysses;
  const double q = ring_backward_bytes_per_rank(BackwardMode::QRing, shape, strategy, ring);
  const double kv = ring_backward_bytes_per_rank(BackwardMode::KvRing, shape, strategy, ring);
  return q <= kv ? BackwardMode::QRing : BackwardMode::KvRing;
}

std::string divisors(std::int64_t n) {
  std::vector<std::string> list;
  for (std::int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) list.push_back(std::to_string(d));
  }
  return text::join(list);
}

void check_shape(const AttentionStrategy& strategy, const AttentionShape& shape, std::vector<Problem>& problems) {
  const auto at_least_one = [&](std::string_view field, std::int64_t value, std::string_view what) {
    if (value < 1) problems.push_back({std::string(field), fmt::format("{} {}", value, what), "at least 1", ""});
  };
  at_least_one("heads", shape.heads, "attention heads");
  at_least_one("head_dim", shape.head_dim, "elements per head");
  at_least_one("seq", shape.seq, "tokens");
  at_least_one("batch", shape.batch, "sequences per batch");
  at_least_one("dtype_bytes", shape.dtype_bytes, "bytes per activation element");
  at_least_one("dkv_bytes", strategy.dkv_bytes, "bytes per dK,dV element");
  at_least_one("dq_bytes", strategy.dq_bytes, "bytes per dQ element");
  if (shape.kv_heads < 1 || (shape.heads >= 1 && shape.heads % shape.kv_heads != 0)) {
    problems.push_back({"kv_heads",
                        fmt::format("{} KV heads do not divide {} attention heads", shape.kv_heads, shape.heads),
                        "a divisor of the head count (equal to it for MHA, fewer for GQA)", ""});
  }
}

void check_mask(const Mask& mask, std::vector<Problem>& problems) {
  if (mask.kind == MaskKind::SlidingWindow && mask.window < 1) {
    problems.push_back({"mask", fmt::format("a sliding window of {} tokens", mask.window), "at least 1 token",
                        "write it like \"sliding:4K\""});
  }
  if (mask.kind == MaskKind::Document && mask.doc_len < 1) {
    problems.push_back({"mask", fmt::format("documents of {} tokens", mask.doc_len), "at least 1 token",
                        "write it like \"document:4K\""});
  }
}

void check_ulysses(const AttentionStrategy& strategy, const AttentionShape& shape, const World& world,
                   std::vector<Problem>& problems) {
  const int u = strategy.ulysses;
  const std::string valid =
      fmt::format("{} (dividing the heads, the KV heads and the world; inside a node or whole nodes)",
                  text::join(valid_ulysses(shape, world)));
  const std::string hint = "a ring over the remaining ranks (burst-usp, loongtrain-usp) lifts the limit";
  const auto add = [&](std::string what, std::string why_hint) {
    problems.push_back({"ulysses", std::move(what), valid, std::move(why_hint)});
  };
  if (u < 1) {
    add(fmt::format("Ulysses degree {}", u), "1 means no head parallelism");
    return;
  }
  if (!divides(u, world.size()))
    add(fmt::format("Ulysses degree {} does not divide the {} ranks of the world", u, world.size()), "");
  if (!divides(u, world.gpus_per_node) && !divides(world.gpus_per_node, u)) {
    add(fmt::format("Ulysses degree {} neither divides the {} GPUs of a node nor spans whole nodes", u,
                    world.gpus_per_node),
        "a group of consecutive ranks must not straddle a node boundary");
  }
  if (!divides(u, shape.heads))
    add(fmt::format("Ulysses degree {} does not divide the {} attention heads", u, shape.heads), hint);
  if (!divides(u, shape.kv_heads) && shape.kv_heads != shape.heads) {  // MHA: said once, above
    add(fmt::format("Ulysses degree {} does not divide the {} KV heads", u, shape.kv_heads),
        "KV heads are not replicated across a Ulysses group, so the degree is at most the KV head count; " + hint);
  }
}

void check_ring_split(const AttentionStrategy& strategy, const AttentionShape& shape, const World& world,
                      std::vector<Problem>& problems) {
  const int u = strategy.ulysses, ring = world.size() / u;
  if (strategy.ring == RingKind::Flat && strategy.inner != 0) {
    problems.push_back({"inner", fmt::format("an inner ring size ({}) needs a double ring", strategy.inner),
                        "0 on a flat ring", "add --ring double, or drop --inner"});
  }
  if (strategy.ring == RingKind::Double && strategy.inner != 0 && !divides(strategy.inner, ring)) {
    problems.push_back(
        {"inner", fmt::format("an inner ring of {} does not divide the ring of {} ranks", strategy.inner, ring),
         fmt::format("0 (the ring ranks of one node) or a divisor of {}: {}", ring, divisors(ring)), ""});
  }
  const std::int64_t layout = layout_multiple(strategy.layout, ring);
  const std::int64_t multiple = u > 1 ? std::lcm(layout, std::int64_t{world.size()}) : layout;
  if (shape.seq % multiple != 0) {
    const std::string chunks = strategy.layout == Layout::Zigzag ? " (2 chunks per rank)" : "";
    const std::string ulysses = u > 1 ? fmt::format(", each split {} ways by Ulysses,", u) : "";
    const std::int64_t below = shape.seq / multiple * multiple, above = below + multiple;
    problems.push_back(
        {"seq",
         fmt::format("{} tokens do not split evenly: {} on a ring of {} ranks{}{} needs a multiple of {}", shape.seq,
                     to_string(strategy.layout), ring, chunks, ulysses, multiple),
         fmt::format("a multiple of {}", multiple),
         below > 0 ? fmt::format("nearest valid lengths: {} or {}", below, above)
                   : fmt::format("the shortest valid length is {}", above)});
  }
  // Compute tasks carry their block size, the tokens of a ring rank, in 32 bits.
  constexpr std::int64_t kMaxBlock = std::numeric_limits<std::int32_t>::max();
  if (shape.seq / ring > kMaxBlock) {
    problems.push_back({"seq",
                        fmt::format("{} tokens on a ring of {} ranks: {} per rank", shape.seq, ring, shape.seq / ring),
                        fmt::format("at most {} tokens per ring rank", kMaxBlock),
                        "more GPUs, or a Ulysses degree of 1, split the sequence further"});
  }
  // The backward graph holds about 3 tasks per (rank, block) pair, and a task costs the
  // lowering and the engines about 100 bytes: cap a phase at 64M tasks (~6 GB), far above the
  // 3M of a 1024-GPU ring and far below TaskId's 32-bit range.
  const double tasks = 3.0 * u * static_cast<double>(ring) * ring;
  constexpr double kMaxTasks = 64.0 * 1024 * 1024;
  if (tasks > kMaxTasks) {
    problems.push_back(
        {"topology",
         fmt::format("a ring of {} ranks lowers to about {:.3g} tasks per phase (~{:.0f} GB to simulate)", ring, tasks,
                     tasks * 100 / 1e9),
         fmt::format("at most {:.3g} tasks (a ring of about {} ranks)", kMaxTasks,
                     static_cast<int>(std::sqrt(kMaxTasks / 3))),
         "a Ulysses degree above 1 shortens the ring (burst-usp)"});
  }
}

}  // namespace

double ring_backward_bytes_per_rank(BackwardMode mode, const AttentionShape& shape, const AttentionStrategy& strategy,
                                    int ring_size) {
  if (ring_size < 2 || strategy.ulysses < 1) return 0;
  const double r = ring_size, c = static_cast<double>(shape.seq / ring_size), b = shape.batch, e = shape.dtype_bytes;
  const double heads = static_cast<double>(shape.heads / strategy.ulysses);
  const double h = heads * shape.head_dim;
  const double h_kv = static_cast<double>(shape.kv_heads / strategy.ulysses) * shape.head_dim;
  if (mode == BackwardMode::KvRing) return b * c * ((r - 1) * 2 * h_kv * e + r * 2 * h_kv * strategy.dkv_bytes);
  return b * c * ((r - 1) * (2 * h * e + 8 * heads) + r * h * strategy.dq_bytes);
}

namespace {

int ulysses_degree(UlyssesRule rule, const AttentionShape& shape, const World& world) {
  switch (rule) {
    case UlyssesRule::None: return 1;
    case UlyssesRule::World: return std::max(1, world.size());
    case UlyssesRule::UpTo4: return largest_ulysses(shape, world, 4);
    case UlyssesRule::UpToNode: return largest_ulysses(shape, world, world.gpus_per_node);
  }
  return 1;
}

}  // namespace

AttentionStrategy strategy_preset(std::string_view name, const AttentionShape& shape, const World& world) {
  const FamilyTraits& f = family_traits(name);
  AttentionStrategy s;
  s.name = std::string(f.name);
  s.overlap = true;
  s.ulysses = ulysses_degree(f.ulysses, shape, world);
  s.ring = f.ring;
  s.layout = f.layout;
  s.dq_bytes = f.dq_bytes;
  s.dkv_bytes = f.dkv_bytes;
  s.code = f.code;
  s.backward = f.backward ? *f.backward : cheaper_backward(shape, s, world);
  return s;
}

AttentionStrategy strategy_preset(std::string_view name, const AttentionShape& shape, const topo::Topology& topology) {
  const World world = attention_world(shape, topology);
  return strategy_preset(name, shape, world.size() > 0 ? world : world_of(topology));
}

std::vector<Problem> applicability_problems(const AttentionStrategy& strategy, const AttentionShape& shape,
                                            const Mask& mask, const World& world) {
  std::vector<Problem> problems;
  if (world.nodes < 1 || world.gpus_per_node < 1) {
    problems.push_back(
        {"topology", fmt::format("the world is empty: {} nodes x {} GPUs per node", world.nodes, world.gpus_per_node),
         "at least 1 node of at least 1 GPU", ""});
    return problems;
  }
  check_shape(strategy, shape, problems);
  check_mask(mask, problems);
  if (!problems.empty()) return problems;  // the checks below divide by these
  check_ulysses(strategy, shape, world, problems);
  if (!problems.empty()) return problems;  // the ring size depends on a valid degree
  check_ring_split(strategy, shape, world, problems);
  return problems;
}

std::string check_applicable(const AttentionStrategy& strategy, const AttentionShape& shape, const Mask& mask,
                             const World& world) {
  std::string reasons;
  for (const Problem& p : applicability_problems(strategy, shape, mask, world)) {
    if (!reasons.empty()) reasons += "; ";
    reasons += p.to_string();
  }
  return reasons;
}

std::string check_applicable(const AttentionStrategy& strategy, const AttentionShape& shape, const Mask& mask,
                             const topo::Topology& topology) {
  const int tp = shape.tensor_parallel, dp = shape.data_parallel;
  if (tp < 1 || topology.gpus_per_node() % tp != 0) {
    return Problem{"tp", fmt::format("tensor parallelism of {} over nodes of {} GPUs", tp, topology.gpus_per_node()),
                   "a divisor of the GPUs per node", "a tensor-parallel group stays inside one node"}
        .to_string();
  }
  const World world = attention_world(shape, topology);
  if (dp < 1 || world.size() < 1) {
    return Problem{"dp",
                   fmt::format("{} data-parallel replicas over {} nodes of {} tensor-parallel groups", dp,
                               topology.nodes(), topology.gpus_per_node() / tp),
                   "a divisor of the nodes, or a multiple of them that splits each node evenly",
                   "every replica is whole nodes or an equal part of one, so all replicas see the same links"}
        .to_string();
  }
  return check_applicable(strategy, shape, mask, world);
}

LoweredAttention lower_attention(const AttentionShape& shape, const Mask& mask, const AttentionStrategy& strategy,
                                 const topo::Topology& topology) {
  const World world = attention_world(shape, topology);
  LoweredAttention one = lower_attention(shape, mask, strategy, world);
  const int copies = shape.tensor_parallel * shape.data_parallel;
  if (copies == 1) return one;
  // The tensor-parallel copies and the data-parallel replicas run side by side on the other
  // GPUs, sharing their links.
  return place_copies(one, shape, world, topology, copies);
}

}  // namespace burst::sim
