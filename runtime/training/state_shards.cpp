// Shard files and their manifest (see state_shards.hpp).
#include "runtime/training/state_shards.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>

#include <fmt/format.h>

#include "common/error.hpp"

namespace burst::rt {
namespace {

// meta.zero's integer `key`, or a problem naming `path`.
std::int64_t zero_field(const Json& zero, const char* key, const std::string& path, Problems& problems) {
  const auto it = zero.find(key);
  if (it != zero.end() && it->is_number_integer() && it->get<std::int64_t>() >= 0) return it->get<std::int64_t>();
  problems.add(path, fmt::format("bad ZeRO metadata: 'zero/{}' is {}", key, it == zero.end() ? "missing" : it->dump()),
               "a non-negative integer");
  return -1;
}

struct Whole {
  TrainingState& state;
  std::int64_t ranks, total;
  std::size_t placed = 0;  // floats put back so far
};

// Checks that `part` (the shard file `file`) is rank r's of the manifest's save, then puts its
// pieces into the whole state.
void place_shard(Whole& whole, const TrainingState& part, std::int64_t rank, const std::string& file) {
  Problems problems;
  const Json zero = part.meta.contains("zero") ? part.meta["zero"] : Json::object();
  const std::int64_t r = zero_field(zero, "rank", file, problems), ranks = zero_field(zero, "ranks", file, problems);
  const std::int64_t total = zero_field(zero, "total", file, problems);
  problems.throw_if_any();
  const auto mismatch = [&](const char* what, auto got, auto want) {
    if (got != want) problems.add(file, fmt::format("{} {}, the manifest says {}", what, got, want), "", "the shards come from different saves: save again");
  };
  mismatch("rank", r, rank);
  mismatch("ranks", ranks, whole.ranks);
  mismatch("total floats", total, whole.total);
  mismatch("step", part.step, whole.state.step);
  mismatch("AdamW step", part.adam_step, whole.state.adam_step);
  const Json pieces = zero.contains("pieces") && zero["pieces"].is_array() ? zero["pieces"] : Json::array();
  // Whether [first, first + count) lies in `size` elements: without computing first + count,
  // which a crafted file can make wrap past 2^64.
  const auto inside = [](std::size_t first, std::size_t count, std::size_t size) { return first <= size && count <= size - first; };
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const Json& p = pieces[i];
    const bool shaped = p.is_array() && p.size() == 3 &&
                        std::all_of(p.begin(), p.end(), [](const Json& x) { return x.is_number_unsigned(); });
    if (!shaped) {
      problems.add(file, fmt::format("bad ZeRO metadata: 'zero/pieces/{}' is {}", i, p.dump()),
                   "[flat offset, count, offset in the shard], non-negative integers");
      continue;
    }
    const auto flat = p[0].get<std::size_t>(), count = p[1].get<std::size_t>(), at = p[2].get<std::size_t>();
    bool fits = inside(flat, count, whole.state.params.size()) && inside(at, count, part.params.size());
    for (const std::vector<float>* moments : {&part.adam_m, &part.adam_v}) {
      fits = fits && (moments->empty() || inside(at, count, moments->size()));
    }
    if (!fits) {
      problems.add(file, fmt::format("piece {} (flat offset {}, {} floats, at {} in the shard) lies outside the state", i,
                                     flat, count, at));
      continue;
    }
    const auto copy = [&](const std::vector<float>& from, std::vector<float>& to) {
      if (!from.empty()) std::copy_n(from.begin() + static_cast<std::ptrdiff_t>(at), count, to.begin() + static_cast<std::ptrdiff_t>(flat));
    };
    copy(part.params, whole.state.params);
    copy(part.adam_m, whole.state.adam_m);
    copy(part.adam_v, whole.state.adam_v);
    whole.placed += count;
  }
  problems.throw_if_any();
}

}  // namespace

std::string shard_path(const std::string& path, int rank, int ranks) { return fmt::format("{}.rank{}-of-{}", path, rank, ranks); }

void save_shard(const std::string& path, const ShardMap& shards, int stage, int rank, TrainingState part) {
  Json pieces = Json::array();
  for (const ShardPiece& p : shards.pieces(rank)) pieces.push_back({p.flat, p.count, p.at});
  part.meta = {{"zero", {{"stage", stage}, {"ranks", shards.ranks()}, {"rank", rank}, {"total", shards.total()}, {"pieces", pieces}}}};
  save_training_state(shard_path(path, rank, shards.ranks()), part);
}

void save_manifest(const std::string& path, const ShardMap& shards, int stage, TrainingState header) {
  Json files = Json::array();
  for (int r = 0; r < shards.ranks(); ++r) {
    files.push_back(std::filesystem::path(shard_path(path, r, shards.ranks())).filename().string());
  }
  header.meta["zero"] = {{"stage", stage}, {"ranks", shards.ranks()}, {"total", shards.total()}, {"files", files}};
  header.params.clear();
  header.adam_m.clear();
  header.adam_v.clear();
  save_training_state(path, header);
}

TrainingState load_whole_state(const std::string& path, std::uint64_t model_size) {
  return assemble_shards(load_training_state(path), path, model_size);
}

TrainingState assemble_shards(TrainingState state, const std::string& path, std::uint64_t model_size) {
  if (!state.meta.contains("zero")) return state;
  Problems problems;
  const std::int64_t ranks = zero_field(state.meta["zero"], "ranks", path, problems);
  const std::int64_t total = zero_field(state.meta["zero"], "total", path, problems);
  problems.throw_if_any();
  // Both sizes are checked against the model before anything is allocated or opened.
  if (static_cast<std::uint64_t>(total) != model_size) {
    problems.add(path, fmt::format("bad ZeRO metadata: 'zero/total' is {} floats, this model has {}", total, model_size),
                 "the model's parameter count", "resume with the model that saved it");
  }
  if (ranks < 1 || ranks > kMaxShardFiles) {
    problems.add(path, fmt::format("bad ZeRO metadata: 'zero/ranks' is {}", ranks), fmt::format("1 to {}", kMaxShardFiles));
  }
  problems.throw_if_any();
  const auto n = static_cast<std::size_t>(total);
  state.params.assign(n, 0.0f);
  state.adam_m.assign(n, 0.0f);
  state.adam_v.assign(n, 0.0f);
  Whole whole{state, ranks, total};
  for (std::int64_t r = 0; r < ranks; ++r) {
    const std::string file = shard_path(path, static_cast<int>(r), static_cast<int>(ranks));
    place_shard(whole, load_training_state(file), r, file);
  }
  if (whole.placed != n) {
    throw Error(Problem{path, fmt::format("its {} shards hold {} of the {} parameters", ranks, whole.placed, n), "",
                        "the shards come from different saves: save again"});
  }
  return state;
}

}  // namespace burst::rt
