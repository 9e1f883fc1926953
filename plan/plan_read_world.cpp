// Reading rank placement and ring orders, and checking they describe something executable.
//
// The world has tp x cp x ulysses x dp ranks, numbered 0..size-1, each listed once and placed on a
// distinct (node, local GPU) slot. A ring's order is the sequence its blocks travel: each
// member receives from the one before it, so a rank listed twice would receive two blocks
// per step and one left out would never see the others'. Every order must therefore hold
// distinct ranks of the world, as many as its level has members: a flat ring cp, an intra
// (node) ring inner, an inter (across nodes) ring outer.
#include <map>
#include <utility>

#include <fmt/format.h>

#include "plan/detail/plan_reader.hpp"

namespace burst::plan::detail {
namespace {

// An array element that must be an integer in [0, size) (or >= 0 when size is unknown).
std::optional<std::int64_t> rank_at(JsonReader& r, const Json& e, std::string_view pointer,
                                    std::optional<std::int64_t> size) {
  const std::int64_t max = size ? *size - 1 : kMaxCount;
  if (!e.is_number_integer() || (e.is_number_unsigned() && e.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) ||
      e.get<std::int64_t>() < 0 || e.get<std::int64_t>() > max) {
    r.problem(pointer, fmt::format("{} is not a rank of the world", e.dump()), fmt::format("0 to {}", max));
    return std::nullopt;
  }
  return e.get<std::int64_t>();
}

// How many members a ring of `level` has, and the strategy knob that says so.
std::pair<const char*, std::optional<std::int64_t>> level_size(const std::string& level, const StrategySizes& s) {
  if (level == "flat") return {"cp", s.cp};
  if (level == "intra") return {"inner", s.inner};
  return {"outer", s.outer};
}

}  // namespace

std::optional<std::int64_t> PlanReader::world(const Json& j, std::string_view pointer, const StrategySizes& sizes,
                                              std::vector<RankPlacement>& ranks) {
  std::optional<std::int64_t> size = reader_.integer(j, pointer, "size", true, 1, kMaxCount);
  if (size && sizes.tp && sizes.dp && sizes.cp && sizes.ulysses) {
    const std::int64_t product = *sizes.tp * *sizes.cp * *sizes.ulysses * *sizes.dp;
    if (*size != product) {
      reader_.problem(JsonReader::child(pointer, "size"),
                      fmt::format("world size {} does not match the strategy: tp x cp x ulysses x dp = {} x {} x {} x "
                                  "{} = {}",
                                  *size, *sizes.tp, *sizes.cp, *sizes.ulysses, *sizes.dp, product),
                      "tp x cp x ulysses x dp",
                      "every GPU of the plan is one rank of a tensor-parallel group, of the head split, of the ring "
                      "and of a data-parallel replica");
      size.reset();
    }
  }
  const Json* list = reader_.array(j, pointer, "ranks");
  if (!list) return size;
  const std::string list_at = JsonReader::child(pointer, "ranks");
  std::map<std::int64_t, std::string> seen_rank;          // rank -> where first listed
  std::map<std::pair<int, int>, std::int64_t> seen_slot;  // (node, local) -> rank
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Json& e = (*list)[i];
    const std::string at = JsonReader::child(list_at, i);
    if (!e.is_object()) {
      reader_.problem(at, fmt::format("expected an object, found {}", e.type_name()),
                      "{\"rank\", \"node\", \"local\"}");
      continue;
    }
    reader_.reject_unknown_keys(e, at, {"rank", "node", "local"});
    RankPlacement p;
    const bool rank = integer(e, at, "rank", p.rank, 0, size ? *size - 1 : kMaxCount);
    const bool node = integer(e, at, "node", p.node, 0, kMaxCount);
    const bool local = integer(e, at, "local", p.local, 0, kMaxCount);
    if (!rank) continue;
    if (const auto [it, fresh] = seen_rank.emplace(p.rank, at); !fresh) {
      reader_.problem(JsonReader::child(at, "rank"),
                      fmt::format("rank {} is listed twice (also at {})", p.rank, it->second), "each rank once");
      continue;
    }
    if (node && local) {
      if (const auto [it, fresh] = seen_slot.emplace(std::pair{p.node, p.local}, p.rank); !fresh) {
        reader_.problem(at,
                        fmt::format("rank {} is placed on node {} local GPU {}, where rank {} already is", p.rank,
                                    p.node, p.local, it->second),
                        "one rank per GPU");
      }
    }
    ranks.push_back(p);
  }
  if (size && static_cast<std::int64_t>(list->size()) != *size) {
    reader_.problem(list_at, fmt::format("{} ranks listed for a world of {}", list->size(), *size),
                    fmt::format("each rank 0 to {} once", *size - 1));
  }
  return size;
}

void PlanReader::rings(const Json& j, std::string_view pointer, const StrategySizes& sizes,
                       std::optional<std::int64_t> world_size, std::vector<Ring>& rings) {
  for (std::size_t i = 0; i < j.size(); ++i) {
    const Json& e = j[i];
    const std::string at = JsonReader::child(pointer, i);
    if (!e.is_object()) {
      reader_.problem(
          at, fmt::format("expected an object, found {}", e.type_name()),
          version_ >= 2 ? "{\"level\", \"tp\", \"dp\", \"member\", \"order\"}" : "{\"level\", \"member\", \"order\"}");
      continue;
    }
    if (version_ >= 2) {
      reader_.reject_unknown_keys(e, at, {"level", "tp", "dp", "member", "order"});
    } else {
      reader_.reject_unknown_keys(e, at, {"level", "member", "order"});
    }
    Ring ring;
    const auto level = reader_.choice(e, at, "level", {"flat", "intra", "inter"});
    if (level) ring.level = *level;
    if (version_ >= 2) {
      integer(e, at, "tp", ring.tp, 0, sizes.tp ? *sizes.tp - 1 : kMaxCount);
      integer(e, at, "dp", ring.dp, 0, sizes.dp ? *sizes.dp - 1 : kMaxCount);
    }
    integer(e, at, "member", ring.member, 0, sizes.ulysses ? *sizes.ulysses - 1 : kMaxCount);
    const Json* order = reader_.array(e, at, "order");
    if (!order) continue;
    const std::string order_at = JsonReader::child(at, "order");
    std::map<std::int64_t, std::size_t> position;  // rank -> first index in the order
    for (std::size_t k = 0; k < order->size(); ++k) {
      const std::string rank_pointer = JsonReader::child(order_at, k);
      const auto rank = rank_at(reader_, (*order)[k], rank_pointer, world_size);
      if (!rank) continue;
      if (const auto [it, fresh] = position.emplace(*rank, k); !fresh) {
        reader_.problem(
            rank_pointer,
            fmt::format("ring order is not a permutation: rank {} appears twice (also at index {})", *rank, it->second),
            "distinct ranks, each receiving from the one before it");
        continue;
      }
      ring.order.push_back(static_cast<int>(*rank));
    }
    if (level) {
      const auto [knob, members] = level_size(*level, sizes);
      if (members && static_cast<std::int64_t>(order->size()) != *members) {
        reader_.problem(order_at,
                        fmt::format("the {} ring lists {} ranks, but the strategy's {} is {}", *level, order->size(),
                                    knob, *members),
                        fmt::format("{} distinct ranks", *members));
      }
    }
    rings.push_back(std::move(ring));
  }
}

}  // namespace burst::plan::detail
